import { afterEach, describe, expect, it } from 'vitest';
import { ANY, ShmEndpoint, ShmSegment } from '../src/index';
import { testSession } from './helpers';

const open: { close(): void }[] = [];
afterEach(() => {
  for (const o of open.splice(0).reverse()) o.close();
});

/** Both slots of one segment in this process: a sender (slot 0) and a receiver (slot 1). */
async function pair() {
  const sessionDir = testSession();
  const a = ShmSegment.create({ sessionDir, job: 'pl', nprocs: 2, unlinkWhenAllAttached: false });
  open.push(a);
  const b = await ShmSegment.attach({
    sessionDir,
    job: 'pl',
    index: 1,
    unlinkWhenAllAttached: false,
  });
  open.push(b);
  const sender = new ShmEndpoint(a);
  const receiver = new ShmEndpoint(b);
  open.push(sender, receiver);
  return { sender, receiver, receiverSegment: b };
}

describe('ShmEndpoint.pollable', () => {
  it('is true exactly while a record waits in a postbox', async () => {
    const { sender, receiver } = await pair();
    expect(receiver.pollable()).toBe(false);
    expect(sender.trySend(1, new Uint8Array([1, 2, 3]))).toBe(true);
    expect(receiver.pollable()).toBe(true);
    expect(sender.pollable()).toBe(false); // nothing for the sender to do
    const m = receiver.tryRecv(ANY);
    expect(m?.from).toBe(0);
    expect([...m!.data]).toEqual([1, 2, 3]);
    expect(receiver.pollable()).toBe(false);
  });
});

describe('ShmEndpoint.recvInPlace', () => {
  it('hands a whole postbox record to the visitor in shared memory, in order, and frees it after', async () => {
    const { sender, receiver, receiverSegment } = await pair();
    const seen: [number, number[], boolean][] = [];
    const visit = (from: number, view: Uint8Array) =>
      // a view of the segment itself, not a copy
      seen.push([from, [...view], view.buffer === receiverSegment.buffer]);
    expect(receiver.recvInPlace(visit)).toBe(false); // nothing there
    expect(sender.trySend(1, new Uint8Array([1, 2]), new Uint8Array([3]))).toBe(true);
    expect(sender.trySend(1, new Uint8Array([4]))).toBe(true);
    expect(receiver.recvInPlace(visit)).toBe(true);
    expect(receiver.recvInPlace(visit)).toBe(true);
    expect(receiver.recvInPlace(visit)).toBe(false);
    expect(seen).toEqual([
      [0, [1, 2, 3], true],
      [0, [4], true],
    ]);
    expect(receiver.pollable()).toBe(false); // both records freed
  });

  it('a visitor that queues a large send leaves the postbox intact (the loop starts after the visit)', async () => {
    const { sender, receiver } = await pair();
    // records from 0 to 1: the one visited, then two more that must come out whole and in order
    expect(sender.trySend(1, new Uint8Array([1, 2, 3]))).toBe(true);
    expect(sender.trySend(1, new Uint8Array([4, 5]))).toBe(true);
    expect(sender.trySend(1, new Uint8Array([6]))).toBe(true);
    let queued: Promise<void> | undefined;
    const large = new Uint8Array(256 * 1024).fill(9); // beyond the postbox: through the pool
    expect(
      receiver.recvInPlace((from, view) => {
        expect([from, ...view]).toEqual([0, 1, 2, 3]);
        queued = receiver.send(0, large); // queued: starts the endpoint's loop (which drains)
      }),
    ).toBe(true);
    expect([...receiver.tryRecv(0)!.data]).toEqual([4, 5]);
    expect([...receiver.tryRecv(0)!.data]).toEqual([6]);
    expect(receiver.tryRecv(0)).toBeUndefined();
    const got = await sender.recv(1, { timeoutMs: 10_000 });
    expect(got.data.length).toBe(large.length);
    await queued;
  });
});
