import { EventEmitter } from 'node:events';
import { connect as netConnect, type Socket } from 'node:net';
import { LamError } from '../errors';
import {
  CHALLENGE_BYTES,
  checkProof,
  checkServerProof,
  DEFAULT_MAX_FRAME,
  encodeFrame,
  FrameDecoder,
  makeChallenge,
  makeProof,
  makeServerProof,
  PROOF_BYTES,
  readChallenge,
  SERVER_PROOF_BYTES,
  type WireMessage,
} from './wire';

export interface ConnectionOptions {
  role: 'server' | 'client';
  secret: Buffer;
  maxFrame?: number;
  /** how long the peer has to complete the handshake */
  authTimeoutMs: number;
  /** names the peer in messages: "connection from 127.0.0.1:40112" */
  label: string;
}

type State = 'challenge' | 'proof' | 'server-proof' | 'open' | 'closed';

/**
 * One authenticated, framed connection (TCP or Unix socket). Nothing but the handshake is read
 * until the peer has proved the universe secret. Events: `ready`, `message` (WireMessage),
 * `close` (reason: string | undefined). Errors never escape as exceptions: they close the
 * connection with a reason.
 */
export class Connection extends EventEmitter {
  private state: State;
  private raw: Buffer = Buffer.alloc(0);
  private readonly decoder: FrameDecoder;
  private readonly queued: Buffer[] = [];
  private nonceS: Buffer = Buffer.alloc(0);
  private nonceC: Buffer = Buffer.alloc(0);
  private authTimer: NodeJS.Timeout | undefined;
  closeReason: string | undefined;
  /** anything the owner wants to remember about the peer (its node, its proc, ...) */
  peer: Record<string, unknown> = {};

  constructor(
    readonly socket: Socket,
    private readonly opts: ConnectionOptions,
  ) {
    super();
    this.decoder = new FrameDecoder(opts.maxFrame ?? DEFAULT_MAX_FRAME);
    socket.setNoDelay?.(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.close(`socket error: ${err.message}`));
    socket.on('close', () => this.close('closed by peer'));
    this.authTimer = setTimeout(
      () => this.close(`no valid handshake within ${opts.authTimeoutMs} ms`),
      opts.authTimeoutMs,
    );
    if (opts.role === 'server') {
      const { bytes, nonce } = makeChallenge();
      this.nonceS = nonce;
      this.state = 'proof';
      socket.write(bytes);
    } else {
      this.state = 'challenge';
    }
  }

  get label(): string {
    return this.opts.label;
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  get isClosed(): boolean {
    return this.state === 'closed';
  }

  /** Sends a message; before the handshake completes it is queued. False when closed. */
  send(message: WireMessage): boolean {
    if (this.state === 'closed') return false;
    const frame = encodeFrame(message, this.opts.maxFrame);
    if (this.state === 'open') this.socket.write(frame);
    else this.queued.push(frame);
    return true;
  }

  close(reason?: string): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.closeReason = reason;
    clearTimeout(this.authTimer);
    this.socket.destroy();
    this.emit('close', reason);
  }

  /** Closes after everything written so far has been flushed. */
  end(): void {
    if (this.state === 'closed') return;
    this.socket.end(() => this.close('ended'));
  }

  private onData(chunk: Buffer): void {
    if (this.state === 'closed') return;
    if (this.state === 'open') {
      this.deliver(chunk);
      return;
    }
    this.raw = this.raw.length ? Buffer.concat([this.raw, chunk]) : chunk;
    this.advanceHandshake();
  }

  private advanceHandshake(): void {
    const { secret } = this.opts;
    if (this.state === 'proof') {
      if (this.raw.length < PROOF_BYTES) return;
      const nonceC = checkProof(secret, this.nonceS, this.raw.subarray(0, PROOF_BYTES));
      if (!nonceC) {
        this.close('authentication failed: the peer does not know the universe secret');
        return;
      }
      this.socket.write(makeServerProof(secret, this.nonceS, nonceC));
      this.open(PROOF_BYTES);
      return;
    }
    if (this.state === 'challenge') {
      if (this.raw.length < CHALLENGE_BYTES) return;
      const nonceS = readChallenge(this.raw.subarray(0, CHALLENGE_BYTES));
      if (!nonceS) {
        this.close('the peer is not a lamd (unexpected greeting)');
        return;
      }
      const proof = makeProof(secret, nonceS);
      this.nonceS = Buffer.from(nonceS);
      this.nonceC = proof.nonceC;
      this.raw = this.raw.subarray(CHALLENGE_BYTES);
      this.state = 'server-proof';
      this.socket.write(proof.bytes);
    }
    if (this.state === 'server-proof') {
      if (this.raw.length < SERVER_PROOF_BYTES) return;
      const ok = checkServerProof(
        secret,
        this.nonceS,
        this.nonceC,
        this.raw.subarray(0, SERVER_PROOF_BYTES),
      );
      if (!ok) {
        this.close('authentication failed: the lamd does not know our universe secret');
        return;
      }
      this.open(SERVER_PROOF_BYTES);
    }
  }

  private open(consumed: number): void {
    const rest = this.raw.subarray(consumed);
    this.raw = Buffer.alloc(0);
    this.state = 'open';
    clearTimeout(this.authTimer);
    for (const frame of this.queued.splice(0)) this.socket.write(frame);
    this.safeEmit('ready');
    if (rest.length > 0 && this.state === 'open') this.deliver(rest);
  }

  private deliver(chunk: Buffer): void {
    const { messages, error } = this.decoder.push(chunk);
    for (const m of messages) {
      if (this.state !== 'open') return;
      this.safeEmit('message', m);
    }
    if (error) this.close(`protocol error: ${error}`);
  }

  /** A listener's bug must not take the process down: it closes this connection instead. */
  private safeEmit(event: string, ...args: unknown[]): void {
    try {
      this.emit(event, ...args);
    } catch (err) {
      this.close(`internal error while handling ${event}: ${(err as Error).stack ?? err}`);
    }
  }
}

export type ConnectTarget = { host: string; port: number } | { path: string };

export interface ConnectOptions {
  secret: Buffer;
  timeoutMs: number;
  maxFrame?: number;
  /** what we are connecting to, for messages: "the lamd of n2 (127.0.0.4)" */
  what: string;
  /** which parameter bounds the wait, for messages */
  timeoutParam?: string;
}

function targetText(t: ConnectTarget): string {
  return 'path' in t ? t.path : `${t.host}:${t.port}`;
}

/** Connects and authenticates; rejects with a LamError that says what failed. */
export function connectTo(target: ConnectTarget, opts: ConnectOptions): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const where = targetText(target);
    const socket = 'path' in target ? netConnect(target.path) : netConnect(target);
    let conn: Connection | undefined;
    let settled = false;
    const finish = (err?: LamError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        conn?.close(err.message);
        socket.destroy();
        reject(err);
      } else resolve(conn!);
    };
    const timer = setTimeout(() => {
      const param = opts.timeoutParam ? ` (${opts.timeoutParam})` : '';
      finish(
        new LamError(
          'TIMEOUT',
          `connecting to ${opts.what} at ${where} did not complete within ${opts.timeoutMs} ms${param}`,
        ),
      );
    }, opts.timeoutMs);
    socket.once('error', (err: NodeJS.ErrnoException) => {
      if (conn) return; // the Connection reports it
      finish(connectError(err, opts.what, where));
    });
    socket.once('connect', () => {
      conn = new Connection(socket, {
        role: 'client',
        secret: opts.secret,
        maxFrame: opts.maxFrame,
        authTimeoutMs: opts.timeoutMs,
        label: `${opts.what} at ${where}`,
      });
      conn.once('ready', () => finish());
      conn.once('close', (reason?: string) => {
        const auth = reason?.startsWith('authentication failed') || reason === 'closed by peer';
        finish(
          new LamError(
            auth ? 'AUTH_FAILED' : 'PROTOCOL',
            auth
              ? `${opts.what} at ${where} refused our universe secret (${reason}); is it a lamd of another universe?`
              : `${opts.what} at ${where}: ${reason}`,
          ),
        );
      });
    });
  });
}

function connectError(err: NodeJS.ErrnoException, what: string, where: string): LamError {
  if (err.code === 'ECONNREFUSED' || err.code === 'ENOENT') {
    return new LamError('UNREACHABLE', `${what} is not running: nothing listens at ${where}`);
  }
  return new LamError('UNREACHABLE', `cannot reach ${what} at ${where}: ${err.message}`);
}

/** Sends one message and waits for the first answer (boot rendezvous exchanges). */
export function exchange(
  conn: Connection,
  message: WireMessage,
  timeoutMs: number,
  what: string,
): Promise<WireMessage> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new LamError('TIMEOUT', `${what}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (m: WireMessage) => {
      cleanup();
      resolve(m);
    };
    const onClose = (reason?: string) => {
      cleanup();
      reject(new LamError('LAMD_LOST', `${what}: connection closed before an answer (${reason})`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      conn.off('message', onMessage);
      conn.off('close', onClose);
    };
    conn.on('message', onMessage);
    conn.on('close', onClose);
    conn.send(message);
  });
}
