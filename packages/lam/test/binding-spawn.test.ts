import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { JobBinder } from '../src/binding/job-binder';
import { allowedCpus } from '../src/binding/node-cpus';
import type { RemoteProcess } from '../src/client/remote-process';
import { LamError } from '../src/errors';
import { LamdLog } from '../src/lamd/lamd-log';
import {
  type ExitStatus,
  ProcessTable,
  type Started,
  spawnRequestProblem,
} from '../src/lamd/process-table';
import { bootLocal, cleanupUniverses, isAlive, waitFor, within } from './helpers';

/**
 * Rank binding with real processes: what the lamd's process table starts is read back from
 * /proc/<pid>/status (Cpus_allowed_list). The table's binder sees a node with this process's
 * allowed CPUs and nothing pinned, so the plans do not depend on what else runs on the machine;
 * the test through a booted lamd checks only that what it reports is what the process got.
 */

const work = mkdtempSync(join(tmpdir(), 'ssi-binding-test-'));
const mine = allowedCpus('self')!;
const tables: ProcessTable[] = [];

afterEach(async () => {
  for (const t of tables.splice(0)) await t.killAll(500);
  await cleanupUniverses();
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

function table(): { procs: ProcessTable; exits: Map<number, ExitStatus>; ended: string[] } {
  const exits = new Map<number, ExitStatus>();
  const ended: string[] = [];
  const procs = new ProcessTable({
    procsDir: work,
    env: () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin' }),
    log: new LamdLog(join(work, 'lamd.log'), false),
    sink: {
      output: () => {},
      exit: (_owner, pid, status) => exits.set(pid, status),
      jobEnded: (job) => ended.push(job),
    },
    binder: new JobBinder(() => ({ allowed: mine, cores: mine.map((c) => [c]), held: [] })),
  });
  tables.push(procs);
  return { procs, exits, ended };
}

const owner = { node: 0, proc: 1 };
const sleeper = ['sleep', '60'];

/**
 * The CPUs `pid` may run on once it runs its program: a bound process is `taskset` until taskset
 * has set the affinity and exec'd the program (a loaded machine can answer the spawn before).
 */
async function cpusOf(pid: number): Promise<number[]> {
  const comm = () => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      return '';
    }
  };
  await waitFor(`process ${pid} to run its program (not taskset)`, () => comm() !== 'taskset');
  const cpus = allowedCpus(pid);
  if (!cpus) throw new Error(`cannot read /proc/${pid}/status`);
  return cpus;
}

describe('binding in the process table', () => {
  it('binds the ranks of a job to a CPU each and reports it', async () => {
    expect(mine.length, 'this test needs 2 allowed CPUs').toBeGreaterThanOrEqual(2);
    const { procs } = table();
    const a = await procs.spawn(
      { argv: sleeper, job: 'A', bind: { to: 'core', slot: 0, of: 2 } },
      owner,
    );
    const b = await procs.spawn(
      { argv: sleeper, job: 'A', bind: { to: 'core', slot: 1, of: 2 } },
      owner,
    );
    expect(await cpusOf(a.pid)).toEqual([mine[0]]);
    expect(await cpusOf(b.pid)).toEqual([mine[1]]);
    expect(a.binding).toEqual({
      cpus: String(mine[0]),
      reason: expect.stringMatching(/^bound to a CPU each/),
    });
    expect(b.binding?.cpus).toBe(String(mine[1]));
  });

  it('binds an oversubscribed job in blocks of consecutive ranks per CPU when asked (lam_bind_oversubscribed)', async () => {
    expect(mine.length, 'this test needs 2 allowed CPUs').toBeGreaterThanOrEqual(2);
    const { procs } = table();
    const of = 2 * mine.length;
    const started: Started[] = [];
    for (let slot = 0; slot < of; slot++) {
      started.push(
        await procs.spawn(
          { argv: sleeper, job: 'B', bind: { to: 'core', slot, of, oversubscribed: 2 } },
          owner,
        ),
      );
    }
    for (let slot = 0; slot < of; slot++) {
      const cpu = mine[Math.floor(slot / 2)]!;
      expect(await cpusOf(started[slot]!.pid), `slot ${slot}`).toEqual([cpu]);
      expect(started[slot]!.binding).toEqual({
        cpus: String(cpu),
        reason: expect.stringMatching(/^bound in blocks of up to 2 consecutive ranks per CPU/),
      });
    }
    const bad = { to: 'core', slot: 0, of: 1, oversubscribed: -1 };
    expect(spawnRequestProblem({ argv: sleeper, bind: bad })).toBe(
      'bind.oversubscribed must be a whole number of ranks a CPU >= 0, got -1',
    );
  });

  it('leaves an oversubscribed job, a job told none and a request without binding unbound', async () => {
    const { procs } = table();
    const over = await procs.spawn(
      { argv: sleeper, job: 'O', bind: { to: 'core', slot: 0, of: mine.length + 1 } },
      owner,
    );
    expect(await cpusOf(over.pid)).toEqual(mine);
    expect(over.binding).toEqual({ reason: expect.stringMatching(/^not bound: oversubscribed/) });
    const none = await procs.spawn(
      { argv: sleeper, job: 'N', bind: { to: 'none', slot: 0, of: 1 } },
      owner,
    );
    expect(await cpusOf(none.pid)).toEqual(mine);
    expect(none.binding?.reason).toBe('not bound (lam_bind_to none)');
    const plain = await procs.spawn({ argv: sleeper, job: 'P' }, owner);
    expect(await cpusOf(plain.pid)).toEqual(mine);
    expect(plain.binding).toBeUndefined();
  });

  it('does not put a second job on the CPUs of one still running, and frees them when it ends', async () => {
    const { procs, exits } = table();
    const all = mine.length;
    const first: Started[] = [];
    for (let slot = 0; slot < all; slot++) {
      first.push(
        await procs.spawn({ argv: sleeper, job: 'J1', bind: { to: 'core', slot, of: all } }, owner),
      );
    }
    const second = await procs.spawn(
      { argv: sleeper, job: 'J2', bind: { to: 'core', slot: 0, of: 1 } },
      owner,
    );
    expect(await cpusOf(second.pid)).toEqual(mine);
    expect(second.binding?.reason).toMatch(/^not bound: 0 free CPU\(s\) for 1 rank\(s\)/);
    for (const p of [...first, second]) procs.signal(p.pid, 'SIGKILL');
    await waitFor('both jobs to exit', () => [...first, second].every((p) => exits.has(p.pid)));
    const third = await procs.spawn(
      { argv: sleeper, job: 'J3', bind: { to: 'core', slot: 0, of: 1 } },
      owner,
    );
    expect(await cpusOf(third.pid)).toEqual([mine[0]]);
  });

  it('keeps "no such program" for a program that does not exist', async () => {
    const { procs } = table();
    const err = await procs
      .spawn(
        { argv: ['no-such-program-xyz'], job: 'E', bind: { to: 'core', slot: 0, of: 1 } },
        owner,
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LamError);
    expect((err as Error).message).toMatch(/cannot start "no-such-program-xyz": no such program/);
  });
});

describe('binding through a lamd', () => {
  it('reports what each process got, as /proc shows it, and refuses a bad request', async () => {
    const u = await bootLocal(['127.0.0.2']);
    const c = await u.client(0);
    const started: RemoteProcess[] = [];
    for (let slot = 0; slot < 2; slot++) {
      started.push(
        await within(
          c.spawn(0, {
            argv: sleeper,
            job: `bind-${process.pid}`,
            bind: { to: 'core', slot, of: 2 },
          }),
          10_000,
          'the spawn answer',
        ),
      );
    }
    for (const p of started) {
      const got = await cpusOf(p.pid);
      expect(p.binding, 'the lamd reports a binding').toBeDefined();
      if (p.binding?.cpus !== undefined) expect(got.join(',')).toBe(p.binding.cpus);
      else expect(got.length, `unbound: ${p.binding?.reason}`).toBeGreaterThan(1);
    }
    if (started.every((p) => p.binding?.cpus !== undefined)) {
      expect(started[0]!.binding!.cpus).not.toBe(started[1]!.binding!.cpus);
    }
    for (const p of started) await p.kill('SIGKILL');
    await waitFor('the sleepers to exit', () => started.every((p) => !isAlive(p.pid)));
    const bad = await c
      .spawn(0, { argv: sleeper, job: 'x', bind: { to: 'socket' as 'core', slot: 0, of: 1 } })
      .catch((e: unknown) => e);
    expect((bad as Error).message).toMatch(/bind.to must be one of core, none, got "socket"/);
  });
});
