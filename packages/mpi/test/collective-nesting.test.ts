import { executionAsyncId } from 'node:async_hooks';
import { withDeadline } from '@ssi/lam';
import { expect, it } from 'vitest';
import type { CollComm, CollModule } from '../src/index';
import { bytesOf, SUM } from '../src/index';
import { soloMpi } from './helpers/loop-rpi';

/**
 * A coll module's own collectives on the communicator it serves run nested in the operation that
 * called it (queued behind it they would wait forever), and telling them apart must not cost
 * every promise of the process: AsyncLocalStorage turns promise hooks on in Node 20, and then
 * every await pays ~0.2 µs.
 */

const seen: { initComm?: CollComm; actionComms: Set<CollComm>; finalized: CollComm[] } = {
  actionComms: new Set(),
  finalized: [],
};

/** One process: each function is its own result, made of the module's nested collectives. */
const nesting: CollModule = {
  ssiApi: '1.0.0',
  type: 'coll',
  typeApi: '1.2.0',
  name: 'nesting',
  version: '1.0.0',
  query: () => ({ priority: 50 }),
  async init(comm) {
    seen.initComm ??= comm;
    // Like smp: a sub-communicator built inside the first collective, on the served communicator.
    const sub = await comm.dup(`${comm.name} (nesting sub)`);
    await sub.free();
    return {
      async barrier(c) {
        seen.actionComms.add(c);
      },
      async bcast(c) {
        seen.actionComms.add(c);
        await c.barrier();
      },
      async allreduce(c, send, recv) {
        seen.actionComms.add(c);
        if (send) bytesOf(recv).set(bytesOf(send));
        await c.bcast(new Uint8Array(1), 0);
      },
    };
  },
  finalize(comm) {
    seen.finalized.push(comm);
  },
};

const solo = soloMpi({ coll: 'nesting' }, [nesting]);

/** The async id a promise reaction runs with: 0 unless promise hooks are on. */
function reactionAsyncId(): Promise<number> {
  return new Promise((resolve) =>
    setImmediate(() => Promise.resolve().then(() => resolve(executionAsyncId()))),
  );
}

it('collectives a module calls on its own communicator run inside the calling one', async () => {
  const w = solo().COMM_WORLD;
  expect(await reactionAsyncId(), 'promise hooks were on before any collective').toBe(0);
  const nested = withDeadline(w.allreduce(3, SUM), 10_000, () => {
    return new Error('allreduce → bcast → barrier (nested in the module) did not finish in 10 s');
  });
  expect(await nested).toBe(3);
  const dup = await w.dup();
  await dup.bcast(new Uint8Array(4), 0);
  await dup.free();
  expect(await reactionAsyncId(), 'a collective turned promise hooks on').toBe(0);
});

it("the module gets one object per communicator, a view that reads and writes the user's", async () => {
  const w = solo().COMM_WORLD;
  await w.barrier();
  const view = w.insideCollective;
  expect(seen.initComm).toBe(view);
  expect(seen.actionComms.has(view)).toBe(true);
  expect(seen.finalized.length).toBe(1); // the duplicate of the first test, by its own view
  expect(view.insideCollective).toBe(view);
  expect([view.name, view.rank, view.size]).toEqual([w.name, w.rank, w.size]);
  view.name = 'renamed through the view';
  expect(w.name).toBe('renamed through the view');
  w.name = 'COMM_WORLD';
});
