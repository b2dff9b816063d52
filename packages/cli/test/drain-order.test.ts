import {
  type CrlamActions,
  CrMessage,
  type HubControl,
  type HubControlHandler,
  JobCheckpoints,
} from '@ssi/mpi';
import { describe, expect, it } from 'vitest';
import { drainJob } from '../src/mpirun/drain';

// The issue (#17, drain notices): "a drain that joins a periodic checkpoint already under way
// may save before the ranks saw the notice". mpirun's real JobCheckpoints and drainJob over a
// job control channel that plays two ranks: a first series is under way (its ranks have not
// saved yet) when the drain comes; the series that ends the job must be prepared after the
// notice went out, and only that one stops the ranks.

interface Sent {
  to: number | 'all';
  type: string;
  payload: Record<string, unknown>;
}

/** A control channel whose two ranks answer at once, except the first GO (held until released). */
function twoRanks() {
  const handlers = new Map<string, HubControlHandler>();
  const sent: Sent[] = [];
  let releaseFirstGo: () => void = () => {};
  const firstGoHeld = new Promise<void>((resolve) => {
    releaseFirstGo = resolve;
  });
  let gos = 0;
  const answer = (type: string, payload: unknown) => {
    for (const rank of [0, 1]) void handlers.get(type)?.(rank, payload);
  };
  const control = {
    on(type: string, h: HubControlHandler) {
      handlers.set(type, h);
      return () => handlers.delete(type);
    },
    send(to: number | 'all', type: string, payload: Record<string, unknown> = {}) {
      sent.push({ to, type, payload });
      queueMicrotask(() => {
        if (type === CrMessage.PREPARE) answer(CrMessage.PREPARED, { attempt: payload.attempt });
        if (type === CrMessage.GO) {
          const saved = (rank: number) => ({
            series: payload.series,
            saved: { rank, file: `rank-${rank}`, bytes: 1, sha256: 'x' },
            drainMs: 0,
            saveMs: 0,
          });
          const reply = () => {
            for (const rank of [0, 1]) void handlers.get(CrMessage.SAVED)?.(rank, saved(rank));
          };
          if (++gos === 1) void firstGoHeld.then(reply);
          else reply();
        }
      });
    },
  } as unknown as HubControl;
  const ready = () => answer(CrMessage.READY, { module: 'test', checkpointable: true });
  return { control, sent, ready, releaseFirstGo };
}

function crlam(): CrlamActions {
  let n = 0;
  return {
    interval: 0,
    beginSeries: async () => ({ series: ++n, dir: '/nowhere' }),
    commitSeries: async (plan) => ({ series: plan.series, dir: plan.dir, bytes: 2, pruned: [] }),
    abandonSeries: async () => {},
  };
}

describe('a drain that comes while a checkpoint is under way', () => {
  it('takes a new series after it, prepared after the notice; only that series stops the ranks', async () => {
    const ch = twoRanks();
    const checkpoints = new JobCheckpoints(ch.control, 2, crlam(), {
      module: 'test',
      prepareTimeoutMs: 5000,
      prepareAttempts: 1,
      say: () => {},
    });
    ch.ready();
    const periodic = checkpoints.request(() => {});
    // The first series is under way: prepared, GO sent, the ranks have not saved.
    await new Promise((r) => setTimeout(r, 20));
    expect(ch.sent.map((m) => m.type)).toEqual([CrMessage.PREPARE, CrMessage.GO]);
    const ended: { code: number; why: string }[] = [];
    const drained = drainJob('SIGTERM', {
      control: ch.control,
      checkpoints,
      end: (code, why) => ended.push({ code, why }),
      say: () => {},
      progress: () => {},
    });
    await new Promise((r) => setTimeout(r, 20));
    ch.releaseFirstGo();
    expect((await periodic).ok).toBe(true);
    const outcome = await drained;
    expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
    if (!outcome.ok) return;

    const types = ch.sent.map((m) => `${m.type}${m.payload.series ? ` ${m.payload.series}` : ''}`);
    const drainAt = ch.sent.findIndex((m) => m.type === CrMessage.DRAIN);
    const prepareOfLast = ch.sent.findIndex(
      (m) => m.type === CrMessage.PREPARE && m.payload.series === outcome.series,
    );
    expect(outcome.series, types.join(', ')).toBe(2);
    expect(drainAt, types.join(', ')).toBeGreaterThanOrEqual(0);
    expect(
      prepareOfLast,
      `the drain's series was prepared before the notice: ${types}`,
    ).toBeGreaterThan(drainAt);
    const dones = ch.sent.filter((m) => m.type === CrMessage.DONE);
    expect(dones.map((d) => [d.payload.series, d.payload.stop ?? false])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(ended).toHaveLength(1);
    expect(ended[0]!.code).toBe(75);
    expect(ended[0]!.why).toMatch(/checkpointed as series 2/);
  });
});
