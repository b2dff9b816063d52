import { readFileSync, statSync } from 'node:fs';
import { LamError } from '@ssi/lam';

/** One physical node of a PBS job. */
export interface PbsNode {
  name: string;
  /** PBS "virtual CPUs" on it: the number of node file lines that name it */
  cpus: number;
  /** the first line that names it (1-based) */
  line: number;
}

const HOST = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

/**
 * The nodes of a PBS node file (`$PBS_NODEFILE`): one line per virtual CPU of the job, a host
 * name per line, a node's lines not necessarily adjacent. Each physical node comes out once, in
 * the order of its first line, with as many CPUs as lines name it (Ch. 4.1.3, step 3). Blank
 * lines are ignored; anything that is not a host name is an error naming the line.
 */
export function parseNodeFile(text: string, file: string): PbsNode[] {
  const nodes = new Map<string, PbsNode>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const name = raw.trim();
    if (name === '') return;
    if (!HOST.test(name)) {
      throw new LamError(
        'BAD_SCHEMA',
        `${file}:${i + 1}: ${JSON.stringify(raw)} is not a host name; a PBS node file has one host name per line`,
      );
    }
    const seen = nodes.get(name);
    if (seen) seen.cpus++;
    else nodes.set(name, { name, cpus: 1, line: i + 1 });
  });
  if (nodes.size === 0) {
    throw new LamError(
      'BAD_SCHEMA',
      `the PBS node file ${file} is empty: PBS writes one line per virtual CPU of the job, so it ` +
        'should name at least this node. Is PBS_NODEFILE the file of this job?',
    );
  }
  return [...nodes.values()];
}

/** Reads and parses `$PBS_NODEFILE`; a missing, unreadable or empty file is a LamError saying which and why. */
export function readNodeFile(file: string): PbsNode[] {
  let text: string;
  try {
    if (statSync(file).isDirectory()) {
      throw Object.assign(new Error('it is a directory'), { code: 'EISDIR' });
    }
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') {
      throw new LamError(
        'BAD_SCHEMA',
        `the PBS node file ${file} (PBS_NODEFILE) does not exist; PBS creates it when the job starts, ` +
          'so lamboot must run inside the job (qsub) that it belongs to',
      );
    }
    throw new LamError(
      'BAD_SCHEMA',
      `cannot read the PBS node file ${file} (PBS_NODEFILE): ${e.code === 'EISDIR' ? 'it is a directory' : e.message}`,
    );
  }
  return parseNodeFile(text, file);
}
