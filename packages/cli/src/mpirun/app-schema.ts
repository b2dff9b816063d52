import { readFileSync } from 'node:fs';
import { UsageError } from '../run-command';
import { type JobPart, parsePart } from './args';

/** Splits a schema line into words; double or single quotes keep spaces inside a word. */
function words(line: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}

/**
 * An application schema (LAM's appschema): one program per line, `[nodes] [-np N] [-x VAR]
 * [-wd dir] program [args]`; blank lines and `#` comments are skipped. Errors name file and line.
 */
export function readAppSchema(file: string): JobPart[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read the application schema ${file}: ${(err as Error).message}`,
      1,
    );
  }
  const parts: JobPart[] = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const where = `${file}:${index + 1}`;
    const part = parsePart(words(line), where);
    if (part.flags.length) {
      throw new UsageError(`${where}: unknown option ${part.flags[0]} in an application schema`, 1);
    }
    if (part.argv.length === 0) throw new UsageError(`${where}: no program on this line`, 1);
    parts.push(part);
  }
  if (parts.length === 0)
    throw new UsageError(`the application schema ${file} names no program`, 1);
  return parts;
}
