// @ts-check
/**
 * Connections: one TCP socket per pair of processes, all made during MPI.init.
 *
 * - **Address exchange.** Every process listens on its node's address (the kernel picks the
 *   port) and publishes `{ host, port }` through the launcher's allgather: one call, made by
 *   every process of the job at the same point of `init`, that returns every process's value.
 * - **Order.** Each process dials every process *before* it in the process list (the list is
 *   the same in every process) and accepts every process after it, so two processes never wait
 *   for each other.
 * - **Authentication.** A dialer's first frame (HELLO) names its world rank and proves that it
 *   knows the job's secret (an HMAC of the job id and that rank: the secret itself never
 *   travels). The acceptor drops any connection without a good HELLO from a process it expects,
 *   so a stray connection is never taken for a rank. (The tcp module goes further, with fresh
 *   nonces in both directions.)
 * - **Failure.** A peer that is missing fails `MPI.init` after `connect_timeout` milliseconds,
 *   naming who did not connect, instead of hanging.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import net from 'node:net';
import { ErrorClass, MpiError, withDeadline } from '@ssi/mpi';
import { encodeFrame, FrameReader, MAX_PAYLOAD, Op } from './frames.js';

/** Bytes of a HELLO's proof (an HMAC-SHA256). */
const PROOF_BYTES = 32;

/** @typedef {import('@ssi/mpi').Proc} Proc */
/** @typedef {import('@ssi/mpi').RpiHost} RpiHost */
/** @typedef {import('./frames.js').Envelope} Envelope */
/** @typedef {{ host: string, port: number }} Address */

/**
 * One connection to a peer process. Frames go out with `send`; frames that come in go to
 * `onFrame`, and the end of the connection to `onClose` (the transport sets both).
 */
export class Peer {
  /**
   * @param {net.Socket} socket
   * @param {Proc | null} proc the peer (null on an accepted socket until its HELLO is checked)
   */
  constructor(socket, proc) {
    this.socket = socket;
    this.proc = proc;
    /** @type {(peer: Peer, env: Envelope, payload: Uint8Array) => void} */
    this.onFrame = () => {};
    /** @type {(peer: Peer, reason: string) => void} */
    this.onClose = () => {};
    let reason = 'the peer closed the connection';
    // Frames of a socket this side destroyed (a bad HELLO, a bad frame) are not looked at.
    const reader = new FrameReader((env, payload) => {
      if (!socket.destroyed) this.onFrame(this, env, payload);
    });
    // Until its HELLO is checked, a connection may send nothing longer than a HELLO: a stranger
    // cannot make this process allocate a message buffer.
    if (proc === null) reader.maxPayload = PROOF_BYTES;
    this.reader = reader;
    socket.setNoDelay(true); // small frames (acknowledgements) go out at once
    socket.on('data', (chunk) => {
      try {
        reader.push(chunk);
      } catch (err) {
        socket.destroy(/** @type {Error} */ (err)); // a frame no peer of ours sends
      }
    });
    socket.on('error', (err) => {
      reason = err.message;
    });
    socket.on('close', () => this.onClose(this, reason));
  }

  /**
   * Writes one frame. Node queues what the kernel cannot take yet and writes it in order.
   * @param {Envelope} env
   * @param {Uint8Array | null} [payload]
   */
  send(env, payload = null) {
    if (!this.socket.destroyed) this.socket.write(encodeFrame(env, payload));
  }

  /** Ends the connection after what was written is sent; at most 2 s, then it is cut. */
  close() {
    return new Promise((resolve) => {
      if (this.socket.destroyed) return resolve(undefined);
      const timer = setTimeout(() => this.socket.destroy(), 2000);
      timer.unref();
      this.socket.once('close', () => {
        clearTimeout(timer);
        resolve(undefined);
      });
      this.socket.end();
    });
  }
}

/**
 * Connects this process with every other process of `procs`. Every process of the job calls it
 * once, in `init` (it contains the job-wide allgather). Each peer is handed to `connected` as
 * soon as its connection is authenticated, possibly before this returns.
 * @param {RpiHost} host
 * @param {Proc[]} procs the process list, in the same order in every process
 * @param {{ name: string, timeoutMs: number, connected: (peer: Peer) => void }} options
 * @returns {Promise<void>}
 */
export async function connectPeers(host, procs, { name, timeoutMs, connected }) {
  const me = host.myProc;
  const mine = procs.indexOf(me);
  /** Later processes that have not dialed us yet, by world rank. */
  const toAccept = new Map(procs.slice(mine + 1).map((p) => [p.gps.grank, p]));
  /** Earlier processes we have not reached yet. */
  const toDial = new Set(procs.slice(0, mine));

  // 1. Listen, and accept the later processes as they come (a fast one may come before the
  //    allgather below returns here).
  /** @type {() => void} */
  let allAccepted = () => {};
  const accepted = new Promise((resolve) => {
    allAccepted = () => resolve(undefined);
  });
  if (toAccept.size === 0) allAccepted();
  const listener = net.createServer((socket) => {
    const peer = new Peer(socket, null);
    peer.onFrame = (_peer, env, payload) => {
      const proc = env.op === Op.HELLO ? toAccept.get(env.rank) : undefined;
      if (proc === undefined || !provesSecret(host, env.rank, payload)) {
        socket.destroy(); // not a process of this job we wait for
        return;
      }
      toAccept.delete(env.rank);
      peer.proc = proc;
      peer.reader.maxPayload = MAX_PAYLOAD;
      connected(peer);
      if (toAccept.size === 0) allAccepted();
    };
  });
  const address = await listen(listener, me.host, name);
  host.verbose(10, `${name}: rank ${me.gps.grank} listening on ${address.host}:${address.port}`);

  // 2. Exchange addresses: every process learns every other's, indexed by world rank.
  const addresses = await host.runtime.allgather(address);

  // 3. Dial the earlier processes, and wait until every later one has dialed us.
  const dials = [...toDial].map(async (proc) => {
    const to = /** @type {Address} */ (addresses[proc.gps.grank]);
    const peer = new Peer(await dial(to, proc, name), proc);
    sayHello(peer, host);
    toDial.delete(proc);
    connected(peer);
  });
  const missing = () =>
    [...toDial, ...toAccept.values()].map((p) => p.describe()).join(', ') || 'nobody';
  try {
    await withDeadline(
      Promise.all([...dials, accepted]),
      timeoutMs,
      () =>
        new MpiError(
          ErrorClass.ERR_OTHER,
          `rpi ${name}: after ${timeoutMs} ms (rpi_${name}_connect_timeout) still not ` +
            `connected to ${missing()}`,
        ),
    );
  } finally {
    listener.close(); // every peer is connected (or never will be): accept no more
  }
}

/**
 * Listens on `address`, port chosen by the kernel.
 * @param {net.Server} server
 * @param {string} address
 * @param {string} name
 * @returns {Promise<Address>}
 */
function listen(server, address, name) {
  return new Promise((resolve, reject) => {
    server.once('error', (err) => {
      reject(
        new MpiError(
          ErrorClass.ERR_OTHER,
          `rpi ${name}: cannot listen on ${address}: ${err.message}`,
        ),
      );
    });
    server.listen(0, address, () => {
      const { port } = /** @type {net.AddressInfo} */ (server.address());
      resolve({ host: address, port });
    });
  });
}

/**
 * Opens a TCP connection to `to`.
 * @param {Address} to
 * @param {Proc} proc
 * @param {string} name
 * @returns {Promise<net.Socket>}
 */
function dial(to, proc, name) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(to.port, to.host);
    const failed = (/** @type {Error} */ err) => {
      reject(
        new MpiError(
          ErrorClass.ERR_OTHER,
          `rpi ${name}: cannot connect to ${proc.describe()} at ${to.host}:${to.port}: ${err.message}`,
        ),
      );
    };
    socket.once('error', failed);
    socket.once('connect', () => {
      socket.off('error', failed);
      resolve(socket);
    });
  });
}

/**
 * Sends the first frame of a dialed connection: who this process is, and the proof.
 * @param {Peer} peer
 * @param {RpiHost} host
 */
function sayHello(peer, host) {
  const rank = host.myProc.gps.grank;
  const env = { op: Op.HELLO, flags: 0, cid: 0, rank, tag: 0, kind: 0, seq: 0, sendId: 0 };
  peer.send(env, proof(host, rank));
}

/**
 * HMAC-SHA256 of "job id:world rank" under the job's secret.
 * @param {RpiHost} host
 * @param {number} rank
 */
function proof(host, rank) {
  return createHmac('sha256', host.runtime.secret).update(`${host.runtime.jobId}:${rank}`).digest();
}

/**
 * Does a HELLO's payload prove that world rank `rank` of this job sent it?
 * @param {RpiHost} host
 * @param {number} rank
 * @param {Uint8Array} payload
 */
function provesSecret(host, rank, payload) {
  const expected = proof(host, rank);
  return payload.byteLength === expected.byteLength && timingSafeEqual(payload, expected);
}
