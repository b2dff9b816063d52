import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { CollectiveDeadline } from '../src/collective-deadline';

/** One timer per communicator bounds its collectives one after another (coll_base_timeout). */
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const never = () => new Promise<never>(() => {});
const expired = () => new Error('expired');

/** Settles `p` into an inspectable state without awaiting it. */
function track<T>(p: Promise<T>) {
  const state: { value?: T; error?: Error } = {};
  p.then(
    (v) => {
      state.value = v;
    },
    (e: Error) => {
      state.error = e;
    },
  );
  return state;
}

it('passes on what the work settles with', async () => {
  const d = new CollectiveDeadline();
  await expect(d.bound(Promise.resolve(7), 1000, expired)).resolves.toBe(7);
  await expect(d.bound(Promise.reject(new Error('own')), 1000, expired)).rejects.toThrow('own');
});

it('maps both rejections through `raise` (the error handler), never a resolved value', async () => {
  const d = new CollectiveDeadline();
  const raise = (err: unknown) => new Error(`raised: ${(err as Error).message}`);
  await expect(d.bound(Promise.resolve(3), 1000, expired, raise)).resolves.toBe(3);
  await expect(d.bound(Promise.reject(new Error('own')), 1000, expired, raise)).rejects.toThrow(
    'raised: own',
  );
  const stuck = track(d.bound(never(), 1000, expired, raise));
  await vi.advanceTimersByTimeAsync(1001);
  expect(stuck.error?.message).toBe('raised: expired');
});

it('a work that fails after its call expired is not raised again (the caller moved on)', async () => {
  const d = new CollectiveDeadline();
  const raised: string[] = [];
  const raise = (err: unknown) => {
    raised.push((err as Error).message);
    return err;
  };
  let fail!: (err: Error) => void;
  const work = new Promise<void>((_resolve, reject) => {
    fail = reject;
  });
  const late = track(d.bound(work, 100, expired, raise));
  await vi.advanceTimersByTimeAsync(101);
  expect(late.error?.message).toBe('expired');
  fail(new Error('a level timed out in turn'));
  await vi.advanceTimersByTimeAsync(1);
  expect(raised).toEqual(['expired']);
});

it('rejects a call that outlives its time, and only that call', async () => {
  const d = new CollectiveDeadline();
  // Many quick calls first: the one timer outlives them without firing anything.
  for (let i = 0; i < 5; i++) await d.bound(Promise.resolve(i), 1000, expired);
  await vi.advanceTimersByTimeAsync(600);
  const stuck = track(d.bound(never(), 1000, expired));
  // The timer armed by the first call fires at 1000 ms and re-arms for this call's deadline.
  await vi.advanceTimersByTimeAsync(999);
  expect(stuck.error).toBeUndefined();
  await vi.advanceTimersByTimeAsync(2);
  expect(stuck.error?.message).toBe('expired');
});

it('a shorter time than the pending timer (the parameter lowered) replaces it', async () => {
  const d = new CollectiveDeadline();
  await d.bound(Promise.resolve(0), 300_000, expired);
  const stuck = track(d.bound(never(), 50, expired));
  await vi.advanceTimersByTimeAsync(51);
  expect(stuck.error?.message).toBe('expired');
});

it('a call that finished is never expired later', async () => {
  const d = new CollectiveDeadline();
  let finish!: () => void;
  const work = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const done = track(d.bound(work, 100, expired));
  await vi.advanceTimersByTimeAsync(50);
  finish();
  await vi.advanceTimersByTimeAsync(200);
  expect(done.error).toBeUndefined();
  expect('value' in done).toBe(true);
});
