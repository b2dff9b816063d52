/**
 * The MPI point-to-point conformance program (Ch. 5.3.1): `node conformance.js <case>...` runs
 * the named cases in order on every rank, with a barrier between cases, and finalizes. A failed
 * check throws, which aborts the job with a message naming the rank and the check. Run it with
 * `launchJob` (or mpirun) over any rpi module: `--ssi rpi <name>`.
 *
 * Environment knobs: `SSI_TEST_DUMMY_RPI=<version>` registers a static rpi module "dummy" with
 * that version (for the agreement tests); `SSI_TEST_DUMMY_PRIORITY` sets its priority.
 */
import { createHash } from 'node:crypto';
import type { Communicator } from '../comm';
import {
  ANY_SOURCE,
  ANY_TAG,
  BSEND_OVERHEAD,
  PROC_NULL,
  THREAD_SINGLE,
  UNDEFINED,
} from '../constants';
import { ERRORS_ARE_FATAL, ERRORS_RETURN } from '../errhandler';
import { ErrorClass } from '../errors';
import { Mpi } from '../mpi';
import type { PersistentRequest } from '../request';
import { Request } from '../request';
import type { RpiModule } from '../rpi/types';
import { Status } from '../status';
import { wtick, wtime } from '../wtime';
import { CheckFailed, check, equal, expectError, within } from './checks';

type Ctx = { mpi: Mpi; world: Communicator; rank: number; size: number };

const BARRIER_TAG = 1;
/** Context of the program's own control traffic (barriers, sums): never matches a case's receives. */
const CONTROL_CID = 0x3ff00000;
const controls = new WeakMap<Communicator, Communicator>();

function control(c: Communicator): Communicator {
  let ctl = controls.get(c);
  if (!ctl) {
    ctl = c.withContext(CONTROL_CID, `${c.name}(control)`);
    controls.set(c, ctl);
  }
  return ctl;
}

/** A dissemination barrier over point-to-point in a separate context (collectives come later). */
async function barrier(world: Communicator): Promise<void> {
  const c = control(world);
  const none = new Uint8Array(0);
  for (let k = 1; k < c.size; k *= 2) {
    const to = (c.rank + k) % c.size;
    const from = (c.rank - k + c.size) % c.size;
    await c.sendrecv(none, to, BARRIER_TAG, new Uint8Array(0), from, BARRIER_TAG);
  }
}

function pattern(n: number, seed: number): Float64Array {
  const a = new Float64Array(n);
  for (let i = 0; i < n; i++) a[i] = seed + i * 0.5;
  return a;
}

function fillPattern(a: Float64Array, n: number, seed: number): void {
  for (let i = 0; i < n; i++) a[i] = seed + i * 0.5;
}

function checkPattern(a: Float64Array, n: number, seed: number, what: string): void {
  for (let i = 0; i < n; i++) {
    if (a[i] !== seed + i * 0.5) {
      throw new CheckFailed(
        `check failed: ${what}: element ${i} of ${n} is ${a[i]}, expected ${seed + i * 0.5}`,
      );
    }
  }
}

/** Pairs ranks (0,1), (2,3), ...: the partner, and whether this rank sends first. */
function partner(ctx: Ctx): { peer: number; sender: boolean } | null {
  const peer = ctx.rank % 2 === 0 ? ctx.rank + 1 : ctx.rank - 1;
  if (peer >= ctx.size) return null;
  return { peer, sender: ctx.rank % 2 === 0 };
}

const MODES = ['send', 'bsend', 'ssend', 'rsend'] as const;
const FLAVOURS = ['blocking', 'nonblocking', 'persistent'] as const;
type Mode = (typeof MODES)[number];
type Flavour = (typeof FLAVOURS)[number];
const GO_TAG = 0x7fe00000;

function sendBlocking(c: Communicator, mode: Mode, data: unknown, dest: number, tag: number) {
  return c[mode](data, dest, tag);
}
function sendNonblocking(c: Communicator, mode: Mode, data: unknown, dest: number, tag: number) {
  const name = `i${mode}` as 'isend' | 'ibsend' | 'issend' | 'irsend';
  return c[name](data, dest, tag);
}
function sendPersistent(c: Communicator, mode: Mode, data: unknown, dest: number, tag: number) {
  const name = `${mode}Init` as 'sendInit' | 'bsendInit' | 'ssendInit' | 'rsendInit';
  return c[name](data, dest, tag);
}

/** Sender side of one mode x flavour combination, `reps` messages. */
async function sendCombo(
  c: Communicator,
  mode: Mode,
  flavour: Flavour,
  peer: number,
  tag: number,
  reps: number,
  make: (rep: number) => unknown,
  refill?: (rep: number) => void,
): Promise<void> {
  const go = new Uint8Array(0);
  let p: PersistentRequest | null = null;
  let first = make(0);
  if (flavour === 'persistent') p = sendPersistent(c, mode, first, peer, tag);
  for (let rep = 0; rep < reps; rep++) {
    if (rep > 0) {
      if (refill) refill(rep);
      else first = make(rep);
    }
    if (mode === 'rsend') await within(c.recv(go, peer, GO_TAG), `the ready signal from ${peer}`);
    const what = `${mode}/${flavour} to ${peer} tag ${tag} rep ${rep}`;
    if (flavour === 'blocking') await within(sendBlocking(c, mode, first, peer, tag), what);
    else if (flavour === 'nonblocking')
      await within(sendNonblocking(c, mode, first, peer, tag).wait(), what);
    else {
      if (!refill && rep > 0) {
        p!.free();
        p = sendPersistent(c, mode, first, peer, tag);
      }
      p!.start();
      const st = await within(p!.wait(), what);
      check(!st.cancelled, `${what}: not cancelled`);
    }
  }
  p?.free();
}

/** Receiver side: returns each message's status (and value for object receives). */
async function recvCombo(
  c: Communicator,
  mode: Mode,
  flavour: Flavour,
  peer: number,
  tag: number,
  reps: number,
  into: ArrayBufferView | null,
  onMessage: (rep: number, st: Status, value: unknown) => void,
): Promise<void> {
  const go = new Uint8Array(0);
  let p: PersistentRequest<unknown> | null = null;
  if (flavour === 'persistent') p = into ? c.recvInit(into, peer, tag) : c.recvInit(peer, tag);
  for (let rep = 0; rep < reps; rep++) {
    const what = `receive ${mode}/${flavour} from ${peer} tag ${tag} rep ${rep}`;
    let value: unknown;
    let st: Status;
    if (flavour === 'persistent') {
      p!.start();
      if (mode === 'rsend') await c.send(go, peer, GO_TAG);
      value = await within(p!.wait(), what);
      st = p!.status!;
    } else if (flavour === 'nonblocking' || mode === 'rsend') {
      const r = into ? c.irecv(into, peer, tag) : c.irecv(peer, tag);
      if (mode === 'rsend') await c.send(go, peer, GO_TAG);
      value = await within(r.wait(), what);
      st = r.status!;
    } else if (into) {
      st = await within(c.recv(into, peer, tag), what);
    } else {
      st = new Status();
      value = await within(c.recv(peer, tag, st), what);
    }
    onMessage(rep, st, value);
  }
  p?.free();
}

// ---- cases -------------------------------------------------------------------------------

async function caseEnv({ mpi, world, rank, size }: Ctx): Promise<void> {
  check(Mpi.initialized(), 'initialized() is true after init');
  check(!Mpi.finalized(), 'finalized() is false before finalize');
  equal(world.rank, rank, 'COMM_WORLD rank');
  equal(world.size, size, 'COMM_WORLD size');
  equal(mpi.COMM_SELF.size, 1, 'COMM_SELF size');
  equal(mpi.COMM_SELF.rank, 0, 'COMM_SELF rank');
  check(mpi.queryThread() >= THREAD_SINGLE, 'queryThread gives a level');
  check(typeof mpi.processorName === 'string' && mpi.processorName.length > 0, 'processor name');
  check(mpi.maxTag >= 32767, `maxTag ${mpi.maxTag} >= 32767 (MPI minimum)`);
  const t0 = wtime();
  await new Promise((r) => setTimeout(r, 5));
  check(wtime() > t0, 'wtime advances');
  check(wtick() > 0 && wtick() < 1e-3, 'wtick is fine-grained');
  check(mpi.rpi.name.length > 0, 'an rpi module is selected');
}

async function caseModes(ctx: Ctx): Promise<void> {
  const { world: c } = ctx;
  const pair = partner(ctx);
  if (!pair) return;
  const SIZES = [0, 1, 1000, 8191, 8192, 8193, 40_000];
  if (pair.sender) ctx.mpi.attachBuffer(8 * 1024 * 1024);
  let combo = 0;
  for (const mode of MODES) {
    for (const flavour of FLAVOURS) {
      for (const n of SIZES) {
        const tag = 1000 + combo++;
        const reps = flavour === 'persistent' ? 3 : 1;
        const seed = (r: number) => tag * 1e7 + r * 1e5;
        if (pair.sender) {
          const data = new Float64Array(n);
          fillPattern(data, n, seed(0));
          await sendCombo(
            c,
            mode,
            flavour,
            pair.peer,
            tag,
            reps,
            () => data,
            (r) => fillPattern(data, n, seed(r)),
          );
        } else {
          const buf = new Float64Array(n + 3);
          await recvCombo(c, mode, flavour, pair.peer, tag, reps, buf, (rep, st) => {
            const what = `${mode}/${flavour} ${n} doubles rep ${rep}`;
            equal(st.source, pair.peer, `${what}: status.source`);
            equal(st.tag, tag, `${what}: status.tag`);
            equal(st.count, n, `${what}: status.count`);
            equal(st.byteLength, n * 8, `${what}: status.byteLength`);
            check(!st.cancelled, `${what}: not cancelled`);
            checkPattern(buf, n, seed(rep), what);
            buf.fill(-1);
          });
        }
      }
    }
  }
  if (pair.sender) await ctx.mpi.detachBuffer();
}

async function caseObjects(ctx: Ctx): Promise<void> {
  const { world: c } = ctx;
  const pair = partner(ctx);
  if (!pair) return;
  const big = 'x'.repeat(300_000); // rendezvous-sized objects too (above 256 KiB)
  const value = (tag: number, rep: number) => ({
    tag,
    rep,
    text: tag % 2 ? big : 'small',
    list: [1, 'two', null, true, { nested: [rep] }],
    n: -1.5,
    big: 1234567890123456789n,
    date: new Date(86_400_000 * (tag + rep)),
  });
  if (pair.sender) ctx.mpi.attachBuffer(4 * 350_000 + 16 * BSEND_OVERHEAD);
  let combo = 0;
  for (const mode of MODES) {
    for (const flavour of FLAVOURS) {
      const tag = 5000 + combo++;
      const reps = flavour === 'persistent' ? 3 : 1;
      if (pair.sender) {
        const state = { current: value(tag, 0) };
        // Persistent object sends encode the current value at every start.
        await sendCombo(
          c,
          mode,
          flavour,
          pair.peer,
          tag,
          reps,
          () => state.current,
          (r) => {
            Object.assign(state.current, value(tag, r));
          },
        );
      } else {
        await recvCombo(c, mode, flavour, pair.peer, tag, reps, null, (rep, st, v) => {
          equal(v, value(tag, rep), `object ${mode}/${flavour} rep ${rep}`);
          equal(st.kindName, 'object', 'status.kindName of an object');
          equal(st.source, pair.peer, 'status.source');
        });
      }
    }
  }
  if (pair.sender) await ctx.mpi.detachBuffer();
  // Typed arrays, Buffers and DataViews received without a buffer keep their type.
  const samples: ArrayBufferView[] = [
    new Float64Array([1.5, -2]),
    new Float32Array([0.25]),
    new Int32Array([-7, 8]),
    new Uint16Array([65535]),
    new Int8Array([-1]),
    new Uint8Array([1, 2, 3]),
    new Uint8ClampedArray([255]),
    new BigInt64Array([-5n]),
    new BigUint64Array([5n]),
    Buffer.from('hello'),
    new Int16Array(0),
  ];
  for (const [i, s] of samples.entries()) {
    if (pair.sender) await c.send(s, pair.peer, 6000 + i);
    else {
      const st = new Status();
      const got = await within(
        c.recv<ArrayBufferView>(pair.peer, 6000 + i, st),
        `typed sample ${i}`,
      );
      equal(got.constructor.name, s.constructor.name, `sample ${i} type`);
      equal(
        Buffer.from(got.buffer, got.byteOffset, got.byteLength),
        Buffer.from(s.buffer, s.byteOffset, s.byteLength),
        `sample ${i} bytes`,
      );
      equal(st.count, (s as unknown as { length: number }).length, `sample ${i} count`);
    }
  }
}

async function caseUnexpected(ctx: Ctx): Promise<void> {
  const { world: c } = ctx;
  const pair = partner(ctx);
  if (!pair) return;
  const sizes = [0, 3, 100, 9000, 50_000, 20, 0, 12_000];
  if (pair.sender) {
    const reqs = sizes.map((n, i) => c.isend(pattern(n, i * 1000), pair.peer, 77));
    const sync = c.issend(pattern(5, 9), pair.peer, 78);
    await c.send('all sent', pair.peer, 79);
    await within(Request.waitall([...reqs, sync]), 'unexpected sends');
  } else {
    equal(await c.recv(pair.peer, 79), 'all sent', 'marker');
    // Every message has at least its envelope here by now; some are complete.
    const first = await within(c.probe(pair.peer, 77), 'probe of the first unexpected message');
    equal(first.count, 0, 'first unexpected message size');
    for (const [i, n] of sizes.entries()) {
      const buf = new Float64Array(n);
      const st = await c.recv(buf, pair.peer, 77);
      equal(st.count, n, `unexpected message ${i} count`);
      checkPattern(buf, n, i * 1000, `unexpected message ${i}`);
    }
    const buf = new Float64Array(5);
    await c.recv(buf, pair.peer, 78);
    checkPattern(buf, 5, 9, 'unexpected synchronous message');
  }
}

async function caseOvertaking(ctx: Ctx): Promise<void> {
  const { world: c } = ctx;
  const pair = partner(ctx);
  if (!pair) return;
  const sizes = [10, 100_000, 5, 0, 200_000, 1, 70_000, 3];
  if (pair.sender) {
    // (a) Same source, tag, communicator: received in sending order, eager and rendezvous mixed.
    const reqs = sizes.map((n, i) => c.isend(pattern(n, i), pair.peer, 11));
    await within(Request.waitall(reqs), 'ordered sends');
    // (b) A later message with another tag may be received first.
    const large = c.isend(pattern(100_000, 7), pair.peer, 21);
    await c.send(pattern(4, 8), pair.peer, 22);
    await within(large.wait(), 'the large message overtaken by tag 22');
    // (c) A synchronous send waits while the receiver takes another tag first.
    const s = c.issend(pattern(2, 3), pair.peer, 31);
    await c.send(pattern(2, 4), pair.peer, 32);
    await within(s.wait(), 'the synchronous send');
    // (d) Blocking sends with any tag from one source, received with ANY_TAG in order.
    for (let i = 0; i < 50; i++) await c.send(i, pair.peer, 40 + (i % 7));
  } else {
    for (const [i, n] of sizes.entries()) {
      const st = new Status();
      const got = await within(c.recv<Float64Array>(pair.peer, 11, st), `ordered message ${i}`);
      equal(got.length, n, `ordered message ${i}: length (non-overtaking)`);
      checkPattern(got, n, i, `ordered message ${i}`);
    }
    const small = new Float64Array(4);
    await c.recv(small, pair.peer, 22);
    checkPattern(small, 4, 8, 'tag 22 before tag 21');
    const large = new Float64Array(100_000);
    await c.recv(large, pair.peer, 21);
    checkPattern(large, 100_000, 7, 'tag 21 after tag 22');
    const b = new Float64Array(2);
    await c.recv(b, pair.peer, 32);
    checkPattern(b, 2, 4, 'tag 32 first');
    await c.recv(b, pair.peer, 31);
    checkPattern(b, 2, 3, 'tag 31 second');
    for (let i = 0; i < 50; i++) {
      const st = new Status();
      equal(await c.recv(pair.peer, ANY_TAG, st), i, `ANY_TAG message ${i} in order`);
      equal(st.tag, 40 + (i % 7), `ANY_TAG message ${i} tag`);
    }
  }
}

async function caseWildcards(ctx: Ctx): Promise<void> {
  const { world: c, rank, size } = ctx;
  const per = 20;
  if (rank !== 0) {
    for (let i = 0; i < per; i++) await c.send({ from: rank, i }, 0, 100 + (i % 3));
  } else {
    const next = new Array(size).fill(0);
    for (let k = 0; k < per * (size - 1); k++) {
      const st = new Status();
      const m = await within(
        c.recv<{ from: number; i: number }>(ANY_SOURCE, ANY_TAG, st),
        `wildcard message ${k}`,
      );
      equal(st.source, m.from, 'status.source of an ANY_SOURCE receive');
      equal(m.i, next[m.from], `messages from ${m.from} in order`);
      equal(st.tag, 100 + (m.i % 3), 'status.tag of an ANY_TAG receive');
      next[m.from]++;
    }
  }
  await barrier(c);
  // Posting order decides between an ANY_SOURCE and a specific receive.
  if (rank === 0) {
    const any = c.irecv(ANY_SOURCE, 200);
    const specific = c.irecv(1, 200);
    const anyTag = c.irecv(1, ANY_TAG);
    await c.send('go', 1, 201);
    equal(
      await within(any.wait(), 'the ANY_SOURCE receive'),
      'a',
      'first posted receive gets the first message',
    );
    equal(
      await within(specific.wait(), 'the specific receive'),
      'b',
      'second posted receive gets the second',
    );
    equal(await within(anyTag.wait(), 'the ANY_TAG receive'), 'c', 'ANY_TAG receive');
    equal(anyTag.status!.tag, 202, 'ANY_TAG status.tag');
  } else if (rank === 1) {
    equal(await c.recv(0, 201), 'go', 'go');
    await c.send('a', 0, 200);
    await c.send('b', 0, 200);
    await c.send('c', 0, 202);
  }
}

async function caseProbe(ctx: Ctx): Promise<void> {
  const { world: c } = ctx;
  const pair = partner(ctx);
  if (!pair) return;
  if (pair.sender) {
    await c.send(pattern(123, 5), pair.peer, 9);
    await c.send(new Int32Array([1, 2, 3]), pair.peer, 10);
    await c.send({ hello: 'probe' }, pair.peer, 11);
    await c.send(pattern(90_000, 6), pair.peer, 12);
    await c.send('polled', pair.peer, 13);
  } else {
    const st = await within(c.probe(pair.peer, 9), 'probe tag 9');
    equal(st.count, 123, 'probe count in the sender element type');
    equal(st.kindName, 'Float64Array', 'probe kind');
    const again = await c.probe(ANY_SOURCE, ANY_TAG);
    equal([again.source, again.tag], [pair.peer, 9], 'a probe does not consume');
    const buf = new Float64Array(st.getCount(Float64Array));
    await c.recv(buf, st.source, st.tag);
    checkPattern(buf, 123, 5, 'probed message');
    const st2 = await c.probe(pair.peer, 10);
    equal(st2.getCount(Int32Array), 3, 'getCount(Int32Array)');
    equal(st2.getCount(Float64Array), UNDEFINED, 'getCount in a non-dividing type');
    const ints = new Int32Array(st2.count);
    await c.recv(ints, pair.peer, 10);
    equal([...ints], [1, 2, 3], 'probed Int32Array');
    const st3 = await c.probe(pair.peer, ANY_TAG);
    equal(st3.tag, 11, 'probe ANY_TAG');
    equal(st3.kindName, 'object', 'probe of an object');
    equal(await c.recv(st3.source, st3.tag), { hello: 'probe' }, 'probed object');
    const st4 = await c.probe(ANY_SOURCE, 12);
    const large = new Float64Array(st4.count);
    await c.recv(large, st4.source, 12);
    checkPattern(large, 90_000, 6, 'probed rendezvous message');
    let st5: Status | undefined = c.iprobe(pair.peer, 13);
    const t0 = Date.now();
    for (; !st5; st5 = c.iprobe(pair.peer, 13)) {
      check(Date.now() - t0 < 30_000, 'iprobe found the message within 30 s');
      await new Promise((r) => setImmediate(r));
    }
    equal(c.iprobe(pair.peer, 14), undefined, 'iprobe of a tag never sent');
    equal(await c.recv(pair.peer, 13), 'polled', 'message found by iprobe');
  }
}

async function caseCancel(ctx: Ctx): Promise<void> {
  const { world: c, mpi } = ctx;
  const pair = partner(ctx);
  // A receive nobody matches.
  const r = c.irecv(new Uint8Array(4), ANY_SOURCE, 999);
  r.cancel();
  const st = await within(r.wait(), 'the cancelled receive');
  check(st.cancelled, 'receive cancelled');
  // A persistent receive cancelled, then used normally.
  const pr = c.recvInit(ANY_SOURCE, 998);
  pr.start();
  pr.cancel();
  await pr.wait();
  check(pr.status!.cancelled, 'persistent receive cancelled');
  // A synchronous send to self that nobody receives.
  const ss = mpi.COMM_SELF.issend(pattern(3, 1), 0, 5);
  ss.cancel();
  check(
    (await within(ss.wait(), 'the cancelled send to self')).cancelled,
    'send to self cancelled',
  );
  equal(mpi.COMM_SELF.iprobe(0, 5), undefined, 'a cancelled send to self is gone');
  if (!pair) {
    pr.free();
    return;
  }
  if (pair.sender) {
    const long = c.isend(pattern(100_000, 1), pair.peer, 50); // rendezvous, never received
    const sync = c.issend(pattern(10, 2), pair.peer, 51); // eager synchronous, never received
    const plain = c.isend(pattern(10, 3), pair.peer, 52); // completes: cannot be cancelled
    await within(plain.wait(), 'the plain send');
    await c.send('posted', pair.peer, 53);
    long.cancel();
    sync.cancel();
    plain.cancel();
    check(
      (await within(long.wait(), 'the cancelled rendezvous send')).cancelled,
      'rendezvous send cancelled',
    );
    check(
      (await within(sync.wait(), 'the cancelled synchronous send')).cancelled,
      'synchronous send cancelled',
    );
    check(!plain.status!.cancelled, 'a completed send is not cancelled');
    // Only once the receiver has restarted its persistent receive: sent earlier, this message
    // could meet the first start of that receive, the one the receiver cancels.
    equal(await c.recv(pair.peer, 55), 'restarted', 'the receiver restarted its receive');
    await c.send('after', pair.peer, 998);
    await c.send('done', pair.peer, 54);
  } else {
    equal(await c.recv(pair.peer, 53), 'posted', 'sender ready');
    const b = new Float64Array(10);
    await c.recv(b, pair.peer, 52);
    checkPattern(b, 10, 3, 'the plain message');
    pr.start();
    await c.send('restarted', pair.peer, 55);
    equal(
      await within(pr.wait(), 'the restarted persistent receive'),
      'after',
      'persistent receive after cancel',
    );
    equal(await c.recv(pair.peer, 54), 'done', 'done marker');
    equal(c.iprobe(pair.peer, 50), undefined, 'the cancelled rendezvous message is gone');
    equal(c.iprobe(pair.peer, 51), undefined, 'the cancelled synchronous message is gone');
  }
  pr.free();
}

/**
 * Long receives posted before their message is sent (a transport may tell the sender, as the tcp
 * rpi does with credits): matching must not change. A wildcard receive next to a named one, a
 * posted receive cancelled before and while its message is sent, and a smaller receive posted
 * ahead of a larger one with the same tag (the first message truncates in the smaller).
 */
async function casePreposted(ctx: Ctx): Promise<void> {
  const { world: c } = ctx;
  const pair = partner(ctx);
  if (!pair) return;
  const n = 40_000; // 320 KB: above the tcp rpi's default eager limit (256 KiB)
  if (pair.sender) {
    equal(await c.recv(pair.peer, 60), 'posted', 'two long receives posted');
    await c.send(pattern(n, 7), pair.peer, 7);
    await c.send(pattern(n, 5), pair.peer, 5);
    equal(await c.recv(pair.peer, 61), 'posted', 'a receive about to be cancelled');
    await c.send(pattern(n, 9), pair.peer, 9);
    equal(await c.recv(pair.peer, 62), 'cancelled', 'a posted receive cancelled');
    await c.send(pattern(n, 10), pair.peer, 10);
    equal(await c.recv(pair.peer, 63), 'posted', 'a small and a large receive posted');
    await c.send(pattern(n, 11), pair.peer, 11);
    await c.send(pattern(n, 12), pair.peer, 11);
    return;
  }
  const named = new Float64Array(n);
  const wild = new Float64Array(n);
  const rNamed = c.irecv(named, pair.peer, 5);
  const rWild = c.irecv(wild, pair.peer, ANY_TAG);
  await c.send('posted', pair.peer, 60);
  equal((await within(rWild.wait(), 'the ANY_TAG receive')).tag, 7, 'ANY_TAG took tag 7');
  checkPattern(wild, n, 7, 'the message taken by ANY_TAG');
  equal((await within(rNamed.wait(), 'the tag 5 receive')).tag, 5, 'tag 5 took tag 5');
  checkPattern(named, n, 5, 'the message taken by tag 5');

  // Cancelled while the message may be on its way: it lands in the receive or in the next one.
  const racing = new Float64Array(n);
  const rRacing = c.irecv(racing, pair.peer, 9);
  await c.send('posted', pair.peer, 61);
  rRacing.cancel();
  if ((await within(rRacing.wait(), 'the racing cancelled receive')).cancelled) {
    await c.recv(racing, pair.peer, 9);
  }
  checkPattern(racing, n, 9, 'the message whose first receive was cancelled');

  // Cancelled before the message is sent: the message waits for the next receive.
  const rGone = c.irecv(new Float64Array(n), pair.peer, 10);
  rGone.cancel();
  check((await within(rGone.wait(), 'the cancelled receive')).cancelled, 'receive cancelled');
  await c.send('cancelled', pair.peer, 62);
  equal((await within(c.probe(pair.peer, 10), 'probe of tag 10')).tag, 10, 'tag 10 arrived');
  const late = new Float64Array(n);
  await c.recv(late, pair.peer, 10);
  checkPattern(late, n, 10, 'the message after a cancelled receive');

  // The earliest posted receive matches, even when a later one is the larger.
  const small = new Float64Array(n / 2);
  const large = new Float64Array(n);
  const before = c.errhandler;
  c.errhandler = ERRORS_RETURN;
  try {
    const rSmall = c.irecv(small, pair.peer, 11);
    const rLarge = c.irecv(large, pair.peer, 11);
    await c.send('posted', pair.peer, 63);
    await expectError(() => rSmall.wait(), ErrorClass.ERR_TRUNCATE, 'the smaller receive first');
    checkPattern(small, n / 2, 11, 'the part that fits the smaller receive');
    await within(rLarge.wait(), 'the larger receive');
    checkPattern(large, n, 12, 'the second message, in the larger receive');
  } finally {
    c.errhandler = before;
  }
}

async function casePersistent(ctx: Ctx): Promise<void> {
  const { world: c } = ctx;
  const pair = partner(ctx);
  if (!pair) return;
  const n = 64;
  const out = new Float64Array(n);
  const inn = new Float64Array(n);
  const send = c.sendInit(out, pair.peer, 7);
  const recv = c.recvInit(inn, pair.peer, 7);
  const sync = c.ssendInit(out, pair.peer, 8);
  const syncRecv = c.recvInit(inn, pair.peer, 8);
  for (let i = 0; i < 1000; i++) {
    fillPattern(out, n, ctx.rank * 1e6 + i);
    Request.startall([recv, send]);
    await within(Request.waitall([recv, send]), `persistent exchange ${i}`);
    checkPattern(inn, n, pair.peer * 1e6 + i, `persistent exchange ${i}`);
    equal(recv.status!.source, pair.peer, 'persistent status.source');
  }
  for (let i = 0; i < 100; i++) {
    fillPattern(out, n, -i);
    if (pair.sender) {
      sync.start();
      await within(sync.wait(), `persistent ssend ${i}`);
      syncRecv.start();
      await syncRecv.wait();
    } else {
      syncRecv.start();
      await within(syncRecv.wait(), `persistent ssend receive ${i}`);
      checkPattern(inn, n, -i, `persistent ssend ${i}`);
      sync.start();
      await sync.wait();
    }
  }
  await expectError(
    () => {
      c.errhandler = ERRORS_RETURN;
      const p = c.recvInit(new Uint8Array(1), pair.peer, 9);
      p.start();
      try {
        p.start();
      } finally {
        p.cancel();
        void p.wait().then(() => p.free());
      }
    },
    ErrorClass.ERR_REQUEST,
    'start of an active persistent request',
  );
  for (const p of [send, recv, sync, syncRecv]) p.free();
}

async function caseSelf(ctx: Ctx): Promise<void> {
  const { world: c, rank, mpi } = ctx;
  const me = rank;
  await c.send(pattern(10, 1), me, 1); // eager: buffered as unexpected
  const b = new Float64Array(10);
  await c.recv(b, me, 1);
  checkPattern(b, 10, 1, 'blocking send to self');
  const big = c.isend(pattern(100_000, 2), me, 2); // long: waits for the receive
  const bb = new Float64Array(100_000);
  await c.recv(bb, me, 2);
  await within(big.wait(), 'long send to self');
  checkPattern(bb, 100_000, 2, 'long send to self');
  const ss = c.issend('sync', me, 3);
  check(!ss.test(), 'synchronous send to self waits for its receive');
  equal(await c.recv(me, 3), 'sync', 'synchronous send to self');
  await within(ss.wait(), 'synchronous send to self');
  const r = c.irecv(me, 4);
  await c.rsend('ready', me, 4);
  equal(await r.wait(), 'ready', 'ready send to self');
  mpi.attachBuffer(1000);
  await c.bsend('buffered', me, 5);
  equal(await c.recv(me, 5), 'buffered', 'buffered send to self');
  await mpi.detachBuffer();
  await c.send({ probe: 'me' }, me, 8);
  const st = await within(c.probe(me, ANY_TAG), 'probe of a message to self');
  equal(st.tag, 8, 'probe of a message to self');
  equal(await c.recv(me, 8), { probe: 'me' }, 'receive after probing self');
  equal(await c.sendrecv('x', me, 6, me, 6), 'x', 'sendrecv with self');
  const self = mpi.COMM_SELF;
  await self.send(new Int16Array([1, 2]), 0, 7);
  equal([...(await self.recv<Int16Array>(0, 7))], [1, 2], 'COMM_SELF');
  equal(self.iprobe(0, 7), undefined, 'nothing left on COMM_SELF');
}

async function caseSizes(ctx: Ctx): Promise<void> {
  const { world: c } = ctx;
  const pair = partner(ctx);
  if (!pair) return;
  const n = (16 * 1024 * 1024) / 8;
  if (pair.sender) {
    await c.send(new Uint8Array(0), pair.peer, 1);
    await c.send(pattern(n, 3), pair.peer, 2);
    await c.ssend(pattern(n, 4), pair.peer, 3);
    await c.send(Buffer.alloc(16 * 1024 * 1024, 7), pair.peer, 4);
    await c.send(new Float64Array(0), pair.peer, 5);
  } else {
    const st0 = await c.recv(new Uint8Array(0), pair.peer, 1);
    equal(st0.count, 0, '0-byte message count');
    const buf = new Float64Array(n);
    const st = await within(c.recv(buf, pair.peer, 2), 'the 16 MB message');
    equal(st.byteLength, 16 * 1024 * 1024, '16 MB length');
    checkPattern(buf, n, 3, '16 MB message');
    await within(c.recv(buf, pair.peer, 3), 'the 16 MB synchronous message');
    checkPattern(buf, n, 4, '16 MB synchronous message');
    const any = await within(
      c.recv<Buffer>(pair.peer, 4),
      'the 16 MB Buffer without a receive buffer',
    );
    check(Buffer.isBuffer(any) && any.length === 16 * 1024 * 1024, '16 MB Buffer received whole');
    check(
      any.every((x) => x === 7),
      '16 MB Buffer contents',
    );
    const empty = await c.recv<Float64Array>(pair.peer, 5);
    check(empty instanceof Float64Array && empty.length === 0, '0-element Float64Array');
  }
}

async function caseSendrecv(ctx: Ctx): Promise<void> {
  const { world: c, rank, size } = ctx;
  const right = (rank + 1) % size;
  const left = (rank - 1 + size) % size;
  const into = new Float64Array(1000);
  const st = await within(
    c.sendrecv(pattern(1000, rank), right, 1, into, left, 1),
    'sendrecv into',
  );
  checkPattern(into, 1000, left, 'sendrecv ring');
  equal(st.source, left, 'sendrecv status.source');
  const got = await c.sendrecv({ from: rank }, right, 2, left, 2);
  equal(got, { from: left }, 'sendrecv objects');
  const big = pattern(100_000, rank);
  await within(c.sendrecvReplace(big, right, 3, left, 3), 'sendrecvReplace');
  checkPattern(big, 100_000, left, 'sendrecvReplace ring');
  // Around the ring once more with the object form and a status.
  const s = new Status();
  equal(
    await c.sendrecv(rank * 10, right, 4, ANY_SOURCE, ANY_TAG, s),
    left * 10,
    'wildcard sendrecv',
  );
  equal([s.source, s.tag], [left, 4], 'sendrecv status');
}

async function caseCompletion(ctx: Ctx): Promise<void> {
  const { world: c } = ctx;
  const pair = partner(ctx);
  if (!pair) return;
  const N = 10;
  if (pair.sender) {
    // Order of arrival: 3, 1, then the rest, each after a go from the receiver.
    for (const i of [3, 1, 0, 2, 4, 5, 6, 7, 8, 9]) {
      await c.recv(pair.peer, 90);
      await c.send(i, pair.peer, 100 + i);
    }
  } else {
    const reqs = Array.from({ length: N }, (_, i) => c.irecv<number>(pair.peer, 100 + i));
    equal(Request.testany(reqs), undefined, 'testany before anything arrived');
    equal(Request.testsome(reqs), [], 'testsome before anything arrived');
    equal(Request.testall(reqs), undefined, 'testall before anything arrived');
    await c.send('go', pair.peer, 90);
    const a = await within(Request.waitany(reqs), 'waitany');
    equal([a.index, a.value, a.status.tag], [3, 3, 103], 'waitany result');
    check(!reqs[3]!.active, 'a consumed request is inactive');
    await c.send('go', pair.peer, 90);
    const some = await within(Request.waitsome(reqs), 'waitsome');
    equal(some, [1], 'waitsome result');
    for (let k = 0; k < 8; k++) await c.send('go', pair.peer, 90);
    const all = await within(Request.waitall(reqs), 'waitall');
    equal(all, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'waitall values (consumed ones again)');
    const none = await Request.waitany(reqs);
    equal(none.index, UNDEFINED, 'waitany with no active request');
    equal(await Request.waitsome(reqs), [], 'waitsome with no active request');
    const t = c.irecv<number>(pair.peer, 110);
    check(!t.test(), 'test before arrival');
    check(!t.done, 'not done');
    await c.send('go', pair.peer, 91);
    await within(t.wait(), 'the tested request');
    check(t.test(), 'test after completion');
    equal(t.result, 42, 'result after test');
  }
  if (pair.sender) {
    await c.recv(pair.peer, 91);
    await c.send(42, pair.peer, 110);
  }
}

async function caseBsend(ctx: Ctx): Promise<void> {
  const { world: c, mpi } = ctx;
  const pair = partner(ctx);
  if (!pair) return;
  c.errhandler = ERRORS_RETURN;
  if (pair.sender) {
    const msg = pattern(40_000, 1); // 320 KB: rendezvous, so it stays in the buffer until received
    mpi.attachBuffer(msg.byteLength + BSEND_OVERHEAD);
    await c.bsend(msg, pair.peer, 1);
    msg.fill(0); // the buffer holds a copy
    await expectError(
      () => c.bsend(new Uint8Array(1), pair.peer, 2),
      ErrorClass.ERR_BUFFER,
      'bsend into a full buffer',
    );
    let detached = false;
    const detach = mpi.detachBuffer().then((m) => {
      detached = true;
      return m;
    });
    await new Promise((r) => setTimeout(r, 50));
    check(!detached, 'detach waits while a buffered message is in flight');
    await c.send('receive now', pair.peer, 3);
    const mem = await within(detach, 'detach after the transmission');
    equal(mem?.byteLength, msg.byteLength + BSEND_OVERHEAD, 'detach returns the attached memory');
    await expectError(
      () => c.bsend(1, pair.peer, 4),
      ErrorClass.ERR_BUFFER,
      'bsend without a buffer',
    );
    // Exactly enough space for two messages, each taking its size + BSEND_OVERHEAD.
    mpi.attachBuffer(2 * (1000 * 8 + BSEND_OVERHEAD));
    for (let i = 0; i < 20; i++) {
      const a = c.ibsend(pattern(1000, i), pair.peer, 10);
      check(a.test(), 'ibsend completes at once');
      await c.recv(pair.peer, 11);
    }
    await mpi.detachBuffer();
  } else {
    equal(await c.recv(pair.peer, 3), 'receive now', 'signal');
    const b = new Float64Array(40_000);
    await c.recv(b, pair.peer, 1);
    checkPattern(b, 40_000, 1, 'buffered message (copied at bsend time)');
    const s = new Float64Array(1000);
    for (let i = 0; i < 20; i++) {
      await c.recv(s, pair.peer, 10);
      checkPattern(s, 1000, i, `buffered message ${i}`);
      await c.send('next', pair.peer, 11);
    }
  }
}

async function caseProcnull(ctx: Ctx): Promise<void> {
  const { world: c } = ctx;
  await c.send(1, PROC_NULL, 1);
  await c.ssend(1, PROC_NULL, 1);
  await c.rsend(1, PROC_NULL, 1);
  await c.bsend(1, PROC_NULL, 1);
  const st = await c.recv(new Uint8Array(4), PROC_NULL, 1);
  equal([st.source, st.tag, st.count], [PROC_NULL, ANY_TAG, 0], 'status of a PROC_NULL receive');
  equal(await c.recv(PROC_NULL, 1), undefined, 'PROC_NULL object receive');
  const reqs = [c.isend(1, PROC_NULL), c.irecv(PROC_NULL), c.issend(1, PROC_NULL)];
  check(
    reqs.every((r) => r.test()),
    'PROC_NULL requests complete at once',
  );
  const p = c.sendInit(1, PROC_NULL);
  for (let i = 0; i < 3; i++) {
    p.start();
    await p.wait();
  }
  p.free();
  equal(c.iprobe(PROC_NULL)?.source, PROC_NULL, 'iprobe of PROC_NULL');
  const sr = new Status();
  await c.sendrecv(1, PROC_NULL, 0, PROC_NULL, 0, sr);
  equal(sr.source, PROC_NULL, 'sendrecv with PROC_NULL');
}

async function caseErrors(ctx: Ctx): Promise<void> {
  const { world: c, size } = ctx;
  const pair = partner(ctx);
  c.errhandler = ERRORS_RETURN;
  await expectError(() => c.send(1, size, 0), ErrorClass.ERR_RANK, 'send to rank size');
  await expectError(() => c.send(1, -5, 0), ErrorClass.ERR_RANK, 'send to rank -5');
  await expectError(() => c.isend(1, 0.5, 0), ErrorClass.ERR_RANK, 'isend to rank 0.5');
  await expectError(() => c.recv(size + 1, 0), ErrorClass.ERR_RANK, 'receive from rank size+1');
  await expectError(() => c.send(1, 0, -3), ErrorClass.ERR_TAG, 'send with tag -3');
  await expectError(() => c.send(1, 0, ANY_TAG), ErrorClass.ERR_TAG, 'send with ANY_TAG');
  await expectError(() => c.irecv(0, 2 ** 40), ErrorClass.ERR_TAG, 'receive with a huge tag');
  await expectError(() => c.bsend(1, 0, 0), ErrorClass.ERR_BUFFER, 'bsend without a buffer');
  await expectError(
    () => c.sendrecvReplace(5 as never, 0, 0, 0, 0),
    ErrorClass.ERR_BUFFER,
    'sendrecvReplace of a number',
  );
  // The library state is intact after bad calls: a normal exchange still works.
  if (!pair) return;
  if (pair.sender) {
    await c.send(pattern(100, 1), pair.peer, 1); // truncated at the receiver
    await c.send(pattern(40_000, 2), pair.peer, 2); // truncated rendezvous
    await c.send({ an: 'object' }, pair.peer, 3); // into a typed array: ERR_TYPE
    await c.send(pattern(5, 4), pair.peer, 4);
    await c.send(pattern(50, 5), pair.peer, 5);
    await c.send(pattern(5, 6), pair.peer, 6);
    // Rendezvous messages truncated beyond their first fragment (the eager limit), unexpected
    // and posted.
    const unexpectedLong = c.isend(pattern(40_000, 7), pair.peer, 7);
    await c.send('sent', pair.peer, 8);
    await within(unexpectedLong.wait(), 'the truncated unexpected rendezvous send');
    equal(await c.recv(pair.peer, 10), 'posted', 'the receiver posted its receive');
    await c.send(pattern(40_000, 9), pair.peer, 9);
  } else {
    const small = new Float64Array(10);
    const e1 = await expectError(
      () => c.recv(small, pair.peer, 1),
      ErrorClass.ERR_TRUNCATE,
      'truncated receive',
    );
    check(e1.message.includes('800 bytes'), 'the truncation message gives the length');
    checkPattern(small, 10, 1, 'the part of a truncated message that fits');
    await expectError(
      () => c.recv(small, pair.peer, 2),
      ErrorClass.ERR_TRUNCATE,
      'truncated rendezvous receive',
    );
    checkPattern(small, 10, 2, 'the part of a truncated rendezvous message that fits');
    await expectError(
      () => c.recv(new Float64Array(100), pair.peer, 3),
      ErrorClass.ERR_TYPE,
      'object into a Float64Array',
    );
    const ok = new Float64Array(5);
    await c.recv(ok, pair.peer, 4);
    checkPattern(ok, 5, 4, 'receive after errors');
    const r1 = c.irecv(new Float64Array(10), pair.peer, 5);
    const r2 = c.irecv(new Float64Array(5), pair.peer, 6);
    const e = await expectError(
      () => Request.waitall([r1, r2]),
      ErrorClass.ERR_IN_STATUS,
      'waitall with a truncation',
    );
    equal(
      e.errors?.map((x) => x?.className ?? null),
      ['ERR_TRUNCATE', null],
      'per-request errors',
    );
    equal(await c.recv(pair.peer, 8), 'sent', 'marker after the unexpected rendezvous send');
    const part = new Float64Array(36_000); // 288,000 bytes of 320,000 (above the 256 KiB eager limit)
    await expectError(
      () => c.recv(part, pair.peer, 7),
      ErrorClass.ERR_TRUNCATE,
      'unexpected rendezvous truncated after its first fragment',
    );
    checkPattern(part, 36_000, 7, 'the part of an unexpected rendezvous message that fits');
    const posted = c.irecv(part.fill(0), pair.peer, 9);
    await c.send('posted', pair.peer, 10);
    await expectError(
      () => posted.wait(),
      ErrorClass.ERR_TRUNCATE,
      'posted rendezvous truncated after its first fragment',
    );
    checkPattern(part, 36_000, 9, 'the part of a posted rendezvous message that fits');
  }
}

/** A seeded PRNG (mulberry32): every rank derives the same schedule. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function caseStress(ctx: Ctx): Promise<void> {
  const { world: c, rank, size } = ctx;
  const total = Number(process.env.SSI_TEST_STRESS_MESSAGES ?? 100_000);
  const perRank = Math.floor(total / size);
  const WINDOW = 64;
  // Everyone computes the whole schedule: who sends how many to whom, with which tag and size.
  const plans: { dest: number; tag: number; len: number }[][] = [];
  const expected = new Array(size).fill(0);
  for (let s = 0; s < size; s++) {
    const r = rng(1000 + s);
    const plan = [];
    for (let k = 0; k < perRank; k++) {
      let dest = Math.floor(r() * (size - 1));
      if (dest >= s) dest++;
      const m = { dest, tag: Math.floor(r() * 8), len: 8 + Math.floor(r() * 248) };
      plan.push(m);
      if (dest === rank) expected[s]++;
    }
    plans.push(plan);
  }
  const toReceive = expected.reduce((a, b) => a + b, 0);
  const mine = plans.map((plan) => plan.filter((m) => m.dest === rank));
  const seqTo = new Array(size).fill(0);
  const seqFrom = new Array(size).fill(0);
  let sumSent = 0;
  let sumReceived = 0;
  const fillMsg = (buf: Uint8Array, from: number, seq: number, len: number) => {
    const v = new DataView(buf.buffer, buf.byteOffset, len);
    v.setUint32(0, from, true);
    v.setUint32(4, seq, true);
    let sum = 0;
    for (let i = 8; i < len; i++) {
      const x = (from * 31 + seq * 7 + i * 13) & 0xff;
      buf[i] = x;
      sum += x;
    }
    return sum;
  };

  const sender = async () => {
    const window: Request[] = [];
    const bufs: Uint8Array[] = [];
    for (const m of plans[rank]!) {
      if (window.length === WINDOW) {
        const { index } = await within(Request.waitany(window), 'a stress send slot');
        window.splice(index, 1);
      }
      const buf = new Uint8Array(m.len);
      sumSent += fillMsg(buf, rank, seqTo[m.dest]++, m.len);
      bufs.push(buf);
      window.push(c.isend(buf, m.dest, m.tag));
    }
    await within(Request.waitall(window), 'the last stress sends', 120_000);
  };

  const receiver = async () => {
    let got = 0;
    const slots: { req: Request; buf: Uint8Array; postedAs: number }[] = [];
    // Per source, the sequence numbers in the order their receives were posted: MPI orders
    // matching, not completion (a rendezvous message may complete after a later eager one).
    const matched: [postedAs: number, seq: number][][] = Array.from({ length: size }, () => []);
    let postCount = 0;
    const post = () => {
      const buf = new Uint8Array(256);
      slots.push({ req: c.irecv(buf, ANY_SOURCE, ANY_TAG), buf, postedAs: postCount++ });
    };
    let posted = Math.min(WINDOW, toReceive);
    for (let i = 0; i < posted; i++) post();
    while (got < toReceive) {
      const { index, status } = await within(
        Request.waitany(slots.map((s) => s.req)),
        `stress message ${got + 1} of ${toReceive}`,
      );
      const { buf, postedAs } = slots[index]!;
      slots.splice(index, 1);
      const v = new DataView(buf.buffer, buf.byteOffset, status.byteLength);
      const from = v.getUint32(0, true);
      const seq = v.getUint32(4, true);
      equal(from, status.source, 'stress: the sender in the payload is status.source');
      const plan = mine[from]![seq];
      check(plan, `stress: ${from}#${seq} is a message ${from} sent here`);
      matched[from]!.push([postedAs, seq]);
      equal(
        [status.tag, status.byteLength],
        [plan.tag, plan.len],
        `stress: tag and length of ${from}#${seq}`,
      );
      let sum = 0;
      for (let i = 8; i < status.byteLength; i++) {
        const x = (from * 31 + seq * 7 + i * 13) & 0xff;
        if (buf[i] !== x)
          throw new CheckFailed(`check failed: stress: byte ${i} of ${from}#${seq}`);
        sum += x;
      }
      sumReceived += sum;
      seqFrom[from]++;
      got++;
      if (posted < toReceive) {
        post();
        posted++;
      }
    }
    for (const [from, list] of matched.entries()) {
      const inPostingOrder = list.sort((a, b) => a[0] - b[0]).map(([, seq]) => seq);
      const firstOutOfOrder = inPostingOrder.findIndex((seq, i) => seq !== i);
      equal(
        firstOutOfOrder === -1 ? -1 : inPostingOrder[firstOutOfOrder],
        -1,
        `stress: messages from ${from} matched in sending order (non-overtaking)`,
      );
    }
  };

  await Promise.all([sender(), receiver()]);
  equal(seqFrom, expected, 'stress: messages received from each rank');
  // Checksums: the sum of what everyone sent equals the sum of what everyone received.
  const sums = await allSums(c, [sumSent, sumReceived]);
  equal(sums[0], sums[1], 'stress: total checksum sent = received');
  if (rank === 0) console.log(`stress: ${perRank * size} messages, checksum ${sums[0]}`);
}

async function allSums(world: Communicator, values: number[]): Promise<number[]> {
  const c = control(world);
  if (c.rank === 0) {
    const total = [...values];
    for (let r = 1; r < c.size; r++) {
      const v = await c.recv<number[]>(r, 0x7fd00000);
      v.forEach((x, i) => {
        total[i]! += x;
      });
    }
    for (let r = 1; r < c.size; r++) await c.send(total, r, 0x7fd00001);
    return total;
  }
  await c.send(values, 0, 0x7fd00000);
  return c.recv<number[]>(0, 0x7fd00001);
}

// ---- cases that end the job ---------------------------------------------------------------

/**
 * Never returns, and keeps the process alive until the launcher kills it. A bare pending promise
 * does not: MPI's idle sockets are unref'd, so such a rank would exit at once (without finalize)
 * and race the failure the case is about.
 */
function waitToBeKilled(): Promise<never> {
  setInterval(() => {}, 1 << 30);
  return new Promise<never>(() => {});
}

async function caseAbort({ mpi, rank }: Ctx): Promise<void> {
  if (rank === 1) await mpi.abort(7, 'rank 1 gives up');
  await waitToBeKilled(); // everyone else
}

async function caseFatalRank({ world, rank, size }: Ctx): Promise<void> {
  if (rank === size - 1) await world.send('nowhere', size + 3, 0);
  await waitToBeKilled();
}

async function caseUnhandled({ rank }: Ctx): Promise<void> {
  if (rank === 0) void Promise.reject(new Error('nobody handles this'));
  await waitToBeKilled();
}

async function caseNoFinalize({ rank }: Ctx): Promise<void> {
  if (rank === 1) process.exit(0);
  await waitToBeKilled();
}

async function casePeerExit({ world, rank }: Ctx): Promise<void> {
  if (rank === 1) process.kill(process.pid, 'SIGKILL');
  await world.recv(1, 5); // waits for a message that never comes
}

const CASES: Record<string, (ctx: Ctx) => Promise<void>> = {
  env: caseEnv,
  modes: caseModes,
  objects: caseObjects,
  unexpected: caseUnexpected,
  overtaking: caseOvertaking,
  wildcards: caseWildcards,
  probe: caseProbe,
  cancel: caseCancel,
  preposted: casePreposted,
  persistent: casePersistent,
  self: caseSelf,
  sizes: caseSizes,
  sendrecv: caseSendrecv,
  completion: caseCompletion,
  bsend: caseBsend,
  procnull: caseProcnull,
  errors: caseErrors,
  stress: caseStress,
  abort: caseAbort,
  'fatal-rank': caseFatalRank,
  'unhandled-rejection': caseUnhandled,
  'no-finalize': caseNoFinalize,
  'peer-exit': casePeerExit,
};

function dummyRpi(version: string, priority: number): RpiModule {
  return {
    ssiApi: '1.0.0',
    type: 'rpi',
    typeApi: '2.0.0',
    name: 'dummy',
    version,
    query: () => ({ priority, threadMin: 0, threadMax: 3 }),
    init: async () => {
      throw new Error('the dummy rpi cannot communicate');
    },
  };
}

async function main(): Promise<void> {
  const names = process.argv.slice(2);
  for (const n of names) {
    if (!CASES[n]) throw new Error(`unknown case "${n}"; known: ${Object.keys(CASES).join(', ')}`);
  }
  const dummy = process.env.SSI_TEST_DUMMY_RPI;
  const modules = dummy ? [dummyRpi(dummy, Number(process.env.SSI_TEST_DUMMY_PRIORITY ?? 0))] : [];
  const mpi = await Mpi.init({ modules });
  const world = mpi.COMM_WORLD;
  const ctx: Ctx = { mpi, world, rank: world.rank, size: world.size };
  for (const name of names) {
    const t0 = Date.now();
    await CASES[name]!(ctx);
    world.errhandler = ERRORS_ARE_FATAL; // cases may have changed it
    await within(barrier(world), `the barrier after case ${name}`, 120_000);
    if (world.rank === 0) console.log(`case ${name} ok (${Date.now() - t0} ms)`);
  }
  await mpi.finalize();
  const hash = createHash('sha1').update(names.join(',')).digest('hex').slice(0, 8);
  if (world.rank === 0) console.log(`conformance ${hash} done`);
}

void main();
