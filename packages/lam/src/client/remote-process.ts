import { EventEmitter } from 'node:events';
import type { Binding } from '../binding/job-binder';
import type { ExitStatus } from '../wire/ops';

/**
 * A process a lamd started for this client. Emits `stdout` and `stderr` (Buffer) as its output
 * arrives; `exited` resolves with its exit status after all output, or rejects when its node's
 * lamd is lost.
 */
export class RemoteProcess extends EventEmitter {
  readonly exited: Promise<ExitStatus>;
  private settle!: { resolve: (s: ExitStatus) => void; reject: (e: Error) => void };
  status: ExitStatus | undefined;
  /** The CPUs the lamd bound the process to and why, when the spawn asked for binding. */
  binding: Binding | undefined;
  /** events that arrived before the caller could attach listeners, replayed in order */
  private held: (() => void)[] | undefined = [];

  constructor(
    readonly node: number,
    readonly pid: number,
    private readonly signalFn: (signal: string) => Promise<void>,
  ) {
    super();
    this.exited = new Promise<ExitStatus>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    this.exited.catch(() => {}); // a rejection nobody awaits is not a crash
    // `spawn` resolves with this object; its caller attaches listeners in the continuation.
    // Output that raced ahead of the spawn answer is replayed once that has happened.
    setImmediate(() => {
      const held = this.held ?? [];
      this.held = undefined;
      for (const event of held) event();
    });
  }

  private deliver(event: () => void): void {
    if (this.held) this.held.push(event);
    else event();
  }

  /** Delivers a signal to the process (its whole process group). */
  kill(signal = 'SIGTERM'): Promise<void> {
    return this.signalFn(signal);
  }

  /** @internal */
  output(fd: number, data: Buffer): void {
    this.deliver(() => this.emit(fd === 2 ? 'stderr' : 'stdout', data));
  }

  /** @internal */
  exit(status: ExitStatus): void {
    this.deliver(() => {
      this.status = status;
      this.settle.resolve(status);
    });
  }

  /** @internal */
  lost(error: Error): void {
    this.deliver(() => this.settle.reject(error));
  }
}
