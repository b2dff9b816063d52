/**
 * Part of `@ssi/mpi/testing` for coll module authors: an in-process stand-in for the
 * point-to-point layer under `comm.coll`, so that every algorithm
 * runs on any number of simulated ranks inside one test. It is deliberately strict:
 * - sends are synchronous (complete only when matched), the least buffering MPI allows, so an
 *   algorithm that relies on buffering deadlocks here instead of on a busy network;
 * - the sender's bytes are copied when the message is matched, so changing a buffer before its
 *   send completed shows up as wrong data;
 * - matching is by source and tag in posting order (MPI's non-overtaking rule);
 * - a message longer than the receive buffer is an error, an unknown rank or bad tag too;
 * - at the end nothing may be left unmatched (App. D.2.1).
 */
import type { CollComm } from '../coll/coll-comm';

interface Message {
  source: Endpoint;
  tag: number;
  bytes: Uint8Array;
  matched: () => void;
}

interface PostedReceive {
  source: Endpoint;
  tag: number;
  into: Uint8Array;
  settle: (error?: Error) => void;
}

/** One simulated process. */
export class Endpoint {
  readonly unexpected: Message[] = [];
  readonly posted: PostedReceive[] = [];
  sends = 0;
  receives = 0;
  constructor(readonly name: string) {}
}

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

function complete(message: Message, receive: PostedReceive): void {
  message.matched();
  if (message.bytes.length > receive.into.length) {
    receive.settle(
      new Error(
        `truncation: ${message.bytes.length} bytes into a ${receive.into.length}-byte buffer`,
      ),
    );
    return;
  }
  receive.into.set(message.bytes);
  receive.settle();
}

function send(from: Endpoint, to: Endpoint, tag: number, data: ArrayBufferView): Promise<void> {
  from.sends++;
  return new Promise((resolve) => {
    const bytes = bytesOf(data);
    const i = to.posted.findIndex((p) => p.source === from && p.tag === tag);
    if (i < 0) {
      // Kept by reference: the copy is taken when matched, from the sender's live buffer.
      to.unexpected.push({ source: from, tag, bytes, matched: resolve });
      return;
    }
    const [receive] = to.posted.splice(i, 1);
    complete({ source: from, tag, bytes, matched: resolve }, receive!);
  });
}

function receive(at: Endpoint, from: Endpoint, tag: number, into: ArrayBufferView): Promise<void> {
  at.receives++;
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => (error ? reject(error) : resolve());
    const target = bytesOf(into);
    const i = at.unexpected.findIndex((m) => m.source === from && m.tag === tag);
    if (i < 0) {
      at.posted.push({ source: from, tag, into: target, settle });
      return;
    }
    const [message] = at.unexpected.splice(i, 1);
    complete(message!, { source: from, tag, into: target, settle });
  });
}

/** A request whose failure is reported by `wait()`, never as an unhandled rejection. */
function request(done: Promise<void>): { wait(): Promise<void> } {
  done.catch(() => {});
  return { wait: () => done };
}

/** A communicator of the simulated world: `coll` is itself, ranks address `peers`. */
export class FakeComm {
  constructor(
    readonly self: Endpoint,
    private readonly peers: readonly Endpoint[],
    readonly rank: number,
    readonly size: number,
    readonly isInter = false,
  ) {}

  get remoteSize(): number {
    return this.peers.length;
  }

  get coll(): this {
    return this;
  }

  private peer(rank: number, what: string): Endpoint {
    const p = this.peers[rank];
    if (p === undefined) throw new Error(`${this.self.name}: ${what} rank ${rank} does not exist`);
    return p;
  }

  private static checkTag(tag: number): void {
    if (!Number.isInteger(tag) || tag < 0) throw new Error(`bad tag ${tag}`);
  }

  send(data: ArrayBufferView, dest: number, tag: number): Promise<void> {
    FakeComm.checkTag(tag);
    return send(this.self, this.peer(dest, 'destination'), tag, data);
  }

  recv(into: ArrayBufferView, source: number, tag: number): Promise<void> {
    FakeComm.checkTag(tag);
    return receive(this.self, this.peer(source, 'source'), tag, into);
  }

  isend(data: ArrayBufferView, dest: number, tag: number): { wait(): Promise<void> } {
    return request(this.send(data, dest, tag));
  }

  irecv(into: ArrayBufferView, source: number, tag: number): { wait(): Promise<void> } {
    return request(this.recv(into, source, tag));
  }

  async sendrecv(
    data: ArrayBufferView,
    dest: number,
    sendTag: number,
    into: ArrayBufferView,
    source: number,
    recvTag: number,
  ): Promise<void> {
    const r = this.irecv(into, source, recvTag);
    const s = this.isend(data, dest, sendTag);
    await Promise.all([r.wait(), s.wait()]);
  }

  /** Typed as the real thing for the code under test. */
  get asCollComm(): CollComm {
    return this as unknown as CollComm;
  }
}

function describePending(endpoints: readonly Endpoint[]): string {
  const lines: string[] = [];
  for (const e of endpoints) {
    for (const p of e.posted) lines.push(`${e.name} waits for tag ${p.tag} from ${p.source.name}`);
    for (const m of e.unexpected)
      lines.push(`${e.name} has unreceived tag ${m.tag} from ${m.source.name}`);
  }
  return lines.join('\n');
}

/** Runs every process body to completion; fails on a deadlock or on leftover messages. */
async function runAll(
  endpoints: readonly Endpoint[],
  bodies: readonly Promise<void>[],
  timeoutMs: number,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadlock = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`deadlock after ${timeoutMs} ms:\n${describePending(endpoints)}`)),
      timeoutMs,
    );
  });
  try {
    await Promise.race([Promise.all(bodies), deadlock]);
  } finally {
    clearTimeout(timer);
  }
  const left = describePending(endpoints);
  if (left) throw new Error(`unmatched communication left behind:\n${left}`);
}

/** An intracommunicator of `size` simulated processes. */
export function intraWorld(size: number): FakeComm[] {
  const endpoints = Array.from({ length: size }, (_, r) => new Endpoint(`rank ${r}`));
  return endpoints.map((e, r) => new FakeComm(e, endpoints, r, size));
}

/** Runs `body` on every rank of an intracommunicator of `size` processes. */
export async function onEveryRank(
  size: number,
  body: (comm: CollComm, rank: number) => Promise<void>,
  timeoutMs = 5000,
): Promise<FakeComm[]> {
  const world = intraWorld(size);
  await runAll(
    world.map((c) => c.self),
    world.map((c) => body(c.asCollComm, c.rank)),
    timeoutMs,
  );
  return world;
}

/** Which side of an intercommunicator a process is on. */
export type Side = 'A' | 'B';

/** Runs `body` on every process of an intercommunicator between groups of sizeA and sizeB. */
export async function onEveryInterProcess(
  sizeA: number,
  sizeB: number,
  body: (comm: CollComm, side: Side, rank: number) => Promise<void>,
  timeoutMs = 5000,
): Promise<void> {
  const a = Array.from({ length: sizeA }, (_, r) => new Endpoint(`A${r}`));
  const b = Array.from({ length: sizeB }, (_, r) => new Endpoint(`B${r}`));
  const bodies = [
    ...a.map((e, r) => body(new FakeComm(e, b, r, sizeA, true).asCollComm, 'A', r)),
    ...b.map((e, r) => body(new FakeComm(e, a, r, sizeB, true).asCollComm, 'B', r)),
  ];
  await runAll([...a, ...b], bodies, timeoutMs);
}
