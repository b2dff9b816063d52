import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '@ssi/cli/testing';
import { describe, expect, it } from 'vitest';
import { USAGE as MPIRUN_USAGE } from '../src/mpirun/args';

const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8'));
const commands = Object.keys(pkg.bin as Record<string, string>);

/**
 * `--version` and `--help` are what a newcomer types first: both answer on stdout with exit
 * code 0 (a script piping `mpirun --help | less` sees the text), and nothing starts.
 */
describe('--version and --help', () => {
  it.each(commands)('%s --version prints one line with the installed version', async (cmd) => {
    const r = await runCli(cmd, ['--version']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(`${cmd} (SSI for Node) ${pkg.version}\n`);
  });

  it.each(commands)('%s --help prints its usage on stdout and exits 0', async (cmd) => {
    const r = await runCli(cmd, ['--help']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(new RegExp(`^usage: ${cmd} `));
  });

  it('mpirun --help prints exactly the usage text', async () => {
    const r = await runCli('mpirun', ['--help']);
    expect(r.stdout).toBe(`${MPIRUN_USAGE}\n`);
  });

  it('laminfo --version <type> still lists module versions (not the CLI version)', async () => {
    const r = await runCli('laminfo', ['--version', 'rpi']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\s*SSI rpi: tcp \(SSI v1\.0/m);
  });

  it('an unknown option is still an error on stderr with exit code 2', async () => {
    const r = await runCli('mpirun', ['--nosuch', 'x.js']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^mpirun: unknown option --nosuch\nusage: mpirun /);
  });
});
