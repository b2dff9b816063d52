import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repo } from './workspace';

/**
 * The root README's commands for this repository run as written: every code line that starts
 * with `pnpm <command of @ssi/cli>` is run from the root, as a reader would paste it, and must
 * end with exit status 0 and this project's output (not another MPI's).
 */
const cli = JSON.parse(readFileSync(join(repo, 'packages/cli/package.json'), 'utf8'));
const commands = new Set(Object.keys(cli.bin));

function readmeCommandLines(): string[] {
  return readFileSync(join(repo, 'README.md'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('    pnpm '))
    .map((l) => l.trim().replace(/\s+#.*$/, ''))
    .filter((l) => commands.has(l.split(/\s+/)[1] ?? ''));
}

/** A child environment without the caller's SSI settings (a test run may carry some). */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('LAM_MPI_SSI_') && k !== 'SSI_MODULE_PATH',
    ),
  );
}

/** What each command's output must show to be this project's, not a namesake's. */
const expected: Record<string, RegExp> = {
  mpirun: /^\[0\] /m,
  laminfo: /SSI for Node|SSI rpi: tcp|rpi_tcp_/,
};

describe("the root README's commands", () => {
  const lines = readmeCommandLines();

  it('include the demo and laminfo (the list this test runs is not empty)', () => {
    expect(lines).toEqual(
      expect.arrayContaining(['pnpm mpirun -np 4 examples/pi.ts', 'pnpm laminfo --version']),
    );
  });

  it.each(lines)('%s runs as written', (line) => {
    const r = spawnSync('sh', ['-c', line], {
      cwd: repo,
      encoding: 'utf8',
      timeout: 180_000,
      env: cleanEnv(),
    });
    if (r.error) throw new Error(`${line}: ${r.error.message}`);
    expect(r.status, `${line} exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(expected[line.split(/\s+/)[1]!] ?? /./);
  });
});
