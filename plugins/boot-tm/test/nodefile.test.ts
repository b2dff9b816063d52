import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseNodeFile, readNodeFile } from '../src/nodefile';

const dir = mkdtempSync(join(tmpdir(), 'ssi-tm-nodefile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('parseNodeFile', () => {
  it('lists each physical node once, in file order, with one CPU per line naming it', () => {
    const text = 'n2\nn1\nn2\nn3\nn1\nn2\n';
    expect(parseNodeFile(text, 'f')).toEqual([
      { name: 'n2', cpus: 3, line: 1 },
      { name: 'n1', cpus: 2, line: 2 },
      { name: 'n3', cpus: 1, line: 4 },
    ]);
  });

  it('accepts adjacent repeats (Torque ppn=), addresses, FQDNs, CRLF, spaces and blank lines', () => {
    const text = 'node01.cluster\r\nnode01.cluster\r\n\r\n  127.0.0.3  \n127.0.0.3\n';
    expect(parseNodeFile(text, 'f')).toEqual([
      { name: 'node01.cluster', cpus: 2, line: 1 },
      { name: '127.0.0.3', cpus: 2, line: 4 },
    ]);
  });

  it('refuses a file without host lines, and lines that are not host names', () => {
    expect(() => parseNodeFile('\n\n  \n', '/x/nodes')).toThrow(
      /the PBS node file \/x\/nodes is empty/,
    );
    expect(() => parseNodeFile('', '/x/nodes')).toThrow(/is empty/);
    expect(() => parseNodeFile('n1\nn2 cpu=2\n', '/x/nodes')).toThrow(
      /\/x\/nodes:2: "n2 cpu=2" is not a host name/,
    );
    expect(() => parseNodeFile('n1\n-n2\n', 'f')).toThrow(/f:2: "-n2" is not a host name/);
  });
});

describe('readNodeFile', () => {
  it('reads a node file', () => {
    const f = join(dir, 'nodes');
    writeFileSync(f, 'a\nb\na\n');
    expect(readNodeFile(f).map((n) => [n.name, n.cpus])).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
  });

  it('says when the file is missing, and that lamboot must run inside the job', () => {
    expect(() => readNodeFile(join(dir, 'absent'))).toThrow(
      /PBS node file .*absent \(PBS_NODEFILE\) does not exist; .*inside the job/,
    );
  });

  it('says when the file cannot be read', () => {
    expect(() => readNodeFile(dir)).toThrow(/cannot read the PBS node file .*: it is a directory/);
    // unreadable even for root: a symbolic link to itself
    const loop = join(dir, 'loop');
    symlinkSync(loop, loop);
    expect(() => readNodeFile(loop)).toThrow(
      /cannot read the PBS node file .*loop \(PBS_NODEFILE\): ELOOP: too many symbolic links/,
    );
  });

  it('says when the file is empty', () => {
    const f = join(dir, 'empty');
    writeFileSync(f, '');
    expect(() => readNodeFile(f)).toThrow(/is empty/);
  });
});
