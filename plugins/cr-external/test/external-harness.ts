import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The job harness (mpirun started with its output collected, lamcheckpoint, the job directory) is
// shared with the other cr modules' tests: it lives in @ssi/cli/testing.
export { jobDir, lamcheckpoint, RunningJob, startJob } from '@ssi/cli/testing';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** A private directory for one test: checkpoint root and the test checkpointer's control dir. */
export function workDir(): { root: string; ctl: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'ssi-cr-external-'));
  return {
    root: join(dir, 'ckpt'),
    ctl: dir,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * The mpirun flags that keep ranks of one node on TCP: the test checkpointer checks (and in its
 * hold mode destroys, `ss -K`) the process's established TCP connections, which a Unix-domain
 * socket (tcp's default between ranks of a node, `rpi_tcp_unix`) does not show.
 */
export const TCP_BETWEEN_RANKS = ['--ssi', 'rpi_tcp_unix', '0'];

/** The checkpoint command that runs the test checkpointer with control directory `ctl`. */
export function testCheckpointer(ctl: string): string {
  return `${process.execPath} ${join(FIXTURES, 'checkpointer.mjs')} {pid} {rank} {image} {series} ${ctl}`;
}

/**
 * mpirun's flags for a job checkpointed by the external module through the test checkpointer:
 * cr external, crtcp with TCP between the ranks of a node, the checkpoint root and control dir of
 * `w`, and `restartCmd` as the restart command.
 */
export function testCheckpointerFlags(
  w: { root: string; ctl: string },
  restartCmd: string,
): string[] {
  return [
    '--ssi',
    'cr',
    'external',
    '--ssi',
    'rpi',
    'crtcp',
    ...TCP_BETWEEN_RANKS,
    '--ssi',
    'crlam_external_dir',
    w.root,
    '--ssi',
    'crmpi_external_checkpoint_cmd',
    testCheckpointer(w.ctl),
    '--ssi',
    'crmpi_external_restart_cmd',
    restartCmd,
  ];
}

/** One call of the test checkpointer, as it recorded it. */
export interface Call {
  rank: number;
  pid: number;
  series: number;
  mode: string;
  sockets: string[];
  problems: string[];
}

export function calls(ctl: string): Call[] {
  const file = join(ctl, 'calls.log');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Call);
}
