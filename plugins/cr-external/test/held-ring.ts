import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, waitFor } from '@ssi/cli/testing';
import { expect } from 'vitest';
import {
  FIXTURES,
  jobDir,
  type RunningJob,
  startJob,
  testCheckpointerFlags,
} from './external-harness';

// The restart tests' emulation of a process-image checkpointer (README "What the test emulation
// covers"): a ring job whose ranks run in sessions of their own, checkpointed by the test
// checkpointer in "hold" mode (the frozen process is kept as its image), preempted.

export const STEPS = '300';
export const PAUSE_MS = '10';
export const RING = join(FIXTURES, 'ring.mjs');
const RESTORER = join(FIXTURES, 'restorer.mjs');
const OWN_SESSION = join(FIXTURES, 'own-session.mjs');

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Process state letter from /proc (T: stopped), or null when it is gone. */
export function stateOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}

/** The established TCP connections of process `pid` (local>peer). */
function establishedOf(pid: number): string[] {
  const out = execFileSync('ss', ['-tnpH', 'state', 'established'], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l.includes(`pid=${pid},`))
    .map((l) => l.trim().split(/\s+/).slice(2, 4).join('>'));
}

/** Kills the kept processes and their keepers recorded in `ctl` (for afterEach). */
export function killKept(ctl: string): void {
  for (const f of ctl && existsSync(ctl) ? readdirSync(ctl) : []) {
    if (!/^held-\d+\.json$/.test(f)) continue;
    const { pid, keeper } = JSON.parse(readFileSync(join(ctl, f), 'utf8'));
    for (const p of [pid, keeper]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
}

/** "after 300 steps … sum N" per rank, sorted by rank. */
export function results(out: string): string[] {
  return [
    ...out.matchAll(/rank (\d): ring OK after (\d+) steps, \d+ checkpoints continued, sum (\d+)/g),
  ]
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map((m) => `rank ${m[1]}: ${m[2]} steps, sum ${m[3]}`);
}

/**
 * Starts the 3-rank ring (`where`: mpirun's nodes, default -np 3) checkpointed by the external
 * module in "hold" mode, waits until it runs, preempts it, and waits until every rank is kept
 * (stopped). Returns the job's checkpoint directory and the kept pids by rank.
 */
export async function heldRing(
  w: { root: string; ctl: string },
  started: (job: RunningJob) => void,
  opts: { where?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<{ dir: string; pids: number[] }> {
  const env = opts.env ?? process.env;
  writeFileSync(join(w.ctl, 'mode'), 'hold');
  const job = startJob(
    [
      ...(opts.where ?? ['-np', '3']),
      ...testCheckpointerFlags(w, `${process.execPath} ${RESTORER} {image} {rank} ${w.ctl}`),
      OWN_SESSION,
      process.execPath,
      RING,
      w.ctl,
      STEPS,
      PAUSE_MS,
    ],
    env,
  );
  started(job);
  await job.lines(/ring running/, 3, 'the three ranks to run the ring');
  const asked = await runCli('lamcheckpoint', ['--preempt', String(job.pid)], env, {
    timeoutMs: 90_000,
  });
  expect(asked.code, asked.stdout + asked.stderr + job.out).toBe(0);
  const end = await job.done;
  expect(end.code, job.out).toBe(75);
  expect(job.out).not.toMatch(/ring OK/);
  const held = [0, 1, 2].map((r) => join(w.ctl, `held-${r}.json`));
  await waitFor('the keeper to hold every rank', () => held.every(existsSync), 30_000);
  const kept = held.map(
    (f) =>
      JSON.parse(readFileSync(f, 'utf8')) as { pid: number; killed: string[]; killError: string },
  );
  for (const k of kept) expect(stateOf(k.pid), `process ${k.pid} is kept stopped`).toBe('T');
  // Their old connections are dead (a keeper destroying one end resets the other): a restore
  // must make new ones.
  const destroyed = kept.flatMap((k) => k.killed);
  expect(destroyed.length, `sockets destroyed (${kept.map((k) => k.killError)})`).toBeGreaterThan(
    0,
  );
  for (const k of kept) expect(establishedOf(k.pid), `process ${k.pid}`).toEqual([]);
  const pids = kept.map((k) => k.pid);
  return { dir: jobDir(w.root), pids };
}

/** What a restart left in rank `rank`'s directory of the series: its runner (0: none yet), who joined. */
export function restoreRecords(
  dir: string,
  rank: number,
): { runner: number; attached: number | null } {
  const series = readdirSync(dir).find((d) => d.startsWith('series-'))!;
  const home = join(dir, series, `external-${rank}`);
  const contact = join(home, 'contact.json');
  const runner = existsSync(contact)
    ? (JSON.parse(readFileSync(contact, 'utf8')).runner as number)
    : 0;
  const attachedFile = join(home, 'attached.json');
  const attached = existsSync(attachedFile)
    ? (JSON.parse(readFileSync(attachedFile, 'utf8')).pid as number)
    : null;
  return { runner, attached };
}
