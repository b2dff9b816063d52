import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import {
  type CheckpointEvent,
  type CheckpointOutcome,
  type CheckpointRequest,
  EXPECTED_REQUEST,
  eventLine,
  MAX_REQUEST_BYTES,
  parseRequest,
} from './checkpoint-protocol';
import {
  checkpointSocketPath,
  ensureCheckpointDir,
  jobAliasPath,
  removeCheckpointDirIfEmpty,
  sweepDeadListeners,
} from './checkpoint-socket';

/** Takes one checkpoint for a request (`preempt`: the drain notice, then the job ends). */
export type CheckpointHandler = (
  progress: (text: string) => void,
  op: CheckpointRequest['op'],
) => Promise<CheckpointOutcome>;

export interface CheckpointRequestOptions {
  /** mpirun's pid: names the socket */
  pid: number;
  jobId: string;
  /** takes one checkpoint (or refuses); called once per request, concurrently if asked so */
  handler: CheckpointHandler;
  /** how long a client may take to send its request line (default 10 s) */
  requestTimeoutMs?: number;
}

/**
 * mpirun's listener for `lamcheckpoint`: a Unix socket at `checkpointSocketPath(pid)` plus the
 * `job-<id>` alias. Each request is handed to the handler, which decides (take, hold, refuse);
 * the server never serializes requests itself, so two clients each get their own answer. No
 * client input can throw in mpirun: a bad request gets a `refused` line saying what was expected.
 */
export class CheckpointRequestServer {
  private readonly clients = new Set<Socket>();
  private closed = false;

  private constructor(
    private readonly server: Server,
    readonly path: string,
    readonly aliasPath: string,
    private readonly opts: CheckpointRequestOptions,
  ) {}

  static async start(opts: CheckpointRequestOptions): Promise<CheckpointRequestServer> {
    const path = checkpointSocketPath(opts.pid);
    const aliasPath = jobAliasPath(opts.jobId);
    // Half-open: a client may end its side after the request and still read the answer.
    const server = createServer({ allowHalfOpen: true });
    const self = new CheckpointRequestServer(server, path, aliasPath, opts);
    server.on('connection', (socket) => self.serve(socket));
    await listenInCheckpointDir(server, path);
    sweepDeadListeners(); // what killed mpiruns left (ours is in place: the directory stays)
    server.on('error', () => {}); // after listening, errors concern single connections
    server.unref(); // the job decides how long mpirun lives, not this listener
    // The alias appears whole or not at all (a client never reads half a pid).
    const temp = `${aliasPath}.${opts.pid}.tmp`;
    writeFileSync(temp, `${opts.pid}\n`, { mode: 0o600 });
    renameSync(temp, aliasPath);
    return self;
  }

  /** Stops listening, answers clients still waiting, removes the socket and the alias. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.clients) send(c, { event: 'refused', reason: 'mpirun is ending' }, true);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.path, { force: true });
    if (aliasHolds(this.aliasPath, this.opts.pid)) rmSync(this.aliasPath, { force: true });
    removeCheckpointDirIfEmpty();
  }

  private serve(socket: Socket): void {
    this.clients.add(socket);
    socket.on('close', () => this.clients.delete(socket));
    socket.on('error', () => {}); // a client that went away: nothing to answer
    const timeoutMs = this.opts.requestTimeoutMs ?? 10_000;
    let buffered = '';
    let taken = false;
    /** Acts on the request line once: the handler for a request, a refusal for anything else. */
    const take = (line: string) => {
      if (taken) return;
      taken = true;
      socket.setTimeout(0);
      const request = parseRequest(line);
      if ('problem' in request) refuse(socket, request.problem);
      else void this.run(socket, request.op);
    };
    socket.setTimeout(timeoutMs, () => {
      if (taken) return;
      taken = true;
      refuse(socket, `no request within ${timeoutMs / 1000} s; expected ${EXPECTED_REQUEST}`);
    });
    socket.on('data', (chunk: Buffer) => {
      if (taken) return; // one request per connection; the rest is ignored
      buffered += chunk.toString('utf8');
      const newline = buffered.indexOf('\n');
      if (newline >= 0) take(buffered.slice(0, newline));
      else if (buffered.length > MAX_REQUEST_BYTES) {
        taken = true;
        refuse(
          socket,
          `request longer than ${MAX_REQUEST_BYTES} bytes; expected ${EXPECTED_REQUEST}`,
        );
      }
    });
    // A request without its newline still counts when the client ended after it.
    socket.on('end', () => take(buffered));
  }

  /** Runs the handler for one client, streaming its progress; a throw becomes a refusal. */
  private async run(socket: Socket, op: CheckpointRequest['op']): Promise<void> {
    const progress = (text: string) => send(socket, { event: 'progress', text: String(text) });
    let outcome: CheckpointOutcome;
    try {
      outcome = await this.opts.handler(progress, op);
    } catch (err) {
      outcome = { ok: false, reason: `checkpoint failed: ${(err as Error)?.message ?? err}` };
    }
    if (outcome.ok) {
      const { series, ms, bytes, dir, phases } = outcome;
      send(socket, { event: 'done', job: this.opts.jobId, series, ms, bytes, dir, phases }, true);
    } else refuse(socket, outcome.reason);
  }
}

/**
 * Listens at `path` inside the checkpoint directory. Another mpirun of this user that ends at the
 * same moment removes the directory when it looks empty, which it does until our socket exists:
 * a listen that finds the directory gone creates it again and retries.
 */
async function listenInCheckpointDir(server: Server, path: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    ensureCheckpointDir();
    // A socket under our own pid can only be left by a dead process that had this pid before.
    rmSync(path, { force: true });
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(path, () => {
          server.off('error', reject);
          resolve();
        });
      });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 5) throw err;
    }
  }
}

function refuse(socket: Socket, reason: string): void {
  send(socket, { event: 'refused', reason }, true);
}

/** Writes one event line; `last` ends the conversation. A closed client is not an error. */
function send(socket: Socket, e: CheckpointEvent, last = false): void {
  if (socket.destroyed || socket.writableEnded) return;
  if (!last) {
    socket.write(eventLine(e));
    return;
  }
  // The answer is flushed, then the connection closed for good: a client that never ends its own
  // side cannot keep mpirun's listener (and `close`) waiting.
  socket.end(eventLine(e));
  socket.destroySoon();
}

function aliasHolds(path: string, pid: number): boolean {
  try {
    return Number(readFileSync(path, 'utf8').trim()) === pid;
  } catch {
    return false;
  }
}
