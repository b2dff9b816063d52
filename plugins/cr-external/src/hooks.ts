import type { CheckpointApi, CheckpointOutcome } from '@ssi/mpi';

/** What an in-process checkpointer is told once this process is frozen (AVS's freeze returned). */
export interface FrozenProcess {
  job: string;
  series: number;
  rank: number;
  size: number;
  pid: number;
  node: string;
  /** A fresh directory for this process's image in the series (the checkpointer may ignore it). */
  image: string;
}

/** How the checkpointer lets the process go: it was saved (unfreeze) or restored from an image. */
export type Verdict = 'unfreeze' | 'restore';

/** A checkpointer's handler for checkpoints it did not start (lamcheckpoint, interval, the program). */
export type FreezeHandler = (frozen: FrozenProcess) => Verdict | Promise<Verdict>;

interface Pending {
  frozen: FrozenProcess;
  decide(v: Verdict): void;
}

/**
 * The meeting point of the `hooks` back end and the checkpointer in the same process: the crmpi
 * module (loaded by the SSI framework) hands a frozen process over here, the program's
 * checkpointer (which imported this package) picks it up. One per process, on `globalThis`, so
 * both meet even when the module and the program load different copies of this package.
 */
class HookPoint {
  handler: FreezeHandler | null = null;
  pending: Pending | null = null;
  freezeWaiters: ((f: FrozenProcess) => void)[] = [];
  private offerLater: (() => boolean) | null = null;

  /**
   * The module's side: the process is frozen; resolves with the checkpointer's verdict. A
   * program's `freeze()` call takes it first; else the `onFreeze` handler; with neither, it waits
   * for one (a rank can be frozen by a checkpoint another rank's `freeze()` started before its
   * own `freeze()` call is made; the module's time-out bounds the wait).
   */
  handOver(frozen: FrozenProcess): Promise<Verdict> {
    return new Promise<Verdict>((resolve, reject) => {
      this.pending = { frozen, decide: resolve };
      const offer = () => {
        const waiters = this.freezeWaiters.splice(0);
        if (waiters.length > 0) {
          for (const w of waiters) w(frozen);
          return true;
        }
        if (this.handler === null) return false;
        const handler = this.handler;
        Promise.resolve()
          .then(() => handler(frozen))
          .then((v) => this.decide(v, 'the onFreeze handler'))
          .catch(reject);
        return true;
      };
      if (!offer()) this.offerLater = offer;
    });
  }

  /** A freeze() call or a handler arrived: a frozen process waiting for one is offered again. */
  arrived(): void {
    if (this.offerLater?.()) this.offerLater = null;
  }

  decide(v: Verdict, who: string): void {
    if (v !== 'unfreeze' && v !== 'restore') {
      throw new Error(`${who} answered ${JSON.stringify(v)}; expected 'unfreeze' or 'restore'`);
    }
    const p = this.pending;
    if (p === null) throw new Error(`${who}: this process is not frozen (call freeze() first)`);
    this.pending = null;
    this.offerLater = null;
    p.decide(v);
  }
}

const KEY = Symbol.for('@ssi/cr-external.hook-point');

/** This process's meeting point (created on first use). */
export function hookPoint(): HookPoint {
  const g = globalThis as { [KEY]?: HookPoint };
  g[KEY] ??= new HookPoint();
  return g[KEY];
}

/** AVS's quiescence hooks for a checkpointer that runs in the rank and drives the job itself. */
export interface CheckpointerHooks {
  /**
   * Freezes the job (AVS's `network_comm_freeze`): collective, every rank calls it; resolves
   * when this process is quiescent — every MPI call held, no byte of the job on any wire.
   * Joins a checkpoint already under way (from lamcheckpoint or the interval) if there is one.
   */
  freeze(): Promise<FrozenProcess>;
  /** The image is safe: MPI goes on (AVS's `network_comm_unfreeze`); resolves once it has. */
  unfreeze(): Promise<void>;
  /**
   * This process was restored from its image (AVS's `network_comm_restore`): every rank
   * re-creates its connections; resolves once MPI can be used again.
   */
  restore(): Promise<void>;
  /** Handles the checkpoints this program did not start by freeze() (returns the verdict). */
  onFreeze(handler: FreezeHandler): () => void;
  /** Application-initiated checkpoint (AVS's `avs_checkpoint`): `mpi.cr.checkpoint()`. */
  checkpoint(): Promise<CheckpointOutcome>;
}

/** The hooks for the program `mpi` (`const mpi = await MPI.init()`), with `--ssi crmpi_external_backend hooks`. */
export function checkpointerHooks(mpi: { cr: CheckpointApi }): CheckpointerHooks {
  const point = hookPoint();
  const afterContinue = () =>
    new Promise<void>((resolve) => {
      const off = mpi.cr.onContinue(() => {
        off();
        resolve();
      });
    });
  const release = async (v: Verdict) => {
    if (point.pending === null) {
      throw new Error(`${v}(): this process is not frozen (call freeze() first, or use onFreeze)`);
    }
    const resumed = afterContinue();
    point.decide(v, v === 'unfreeze' ? 'unfreeze()' : 'restore()');
    return resumed;
  };
  return {
    freeze() {
      if (mpi.cr.module !== 'external') {
        return Promise.reject(
          new Error(
            `freeze(): the job's cr module is ${mpi.cr.module ? `"${mpi.cr.module}"` : 'none'}; run with --ssi cr external --ssi crmpi_external_backend hooks`,
          ),
        );
      }
      return new Promise<FrozenProcess>((resolve, reject) => {
        let served = false;
        const waiter = (f: FrozenProcess) => {
          served = true;
          resolve(f);
        };
        point.freezeWaiters.push(waiter);
        // This rank may be frozen already, by a checkpoint another rank's freeze() started.
        point.arrived();
        // Always asked, so that every rank's k-th freeze() is the job's k-th checkpoint request
        // (mpirun pairs them); a refusal is the freeze's error.
        void mpi.cr.checkpoint().then((outcome) => {
          const i = point.freezeWaiters.indexOf(waiter);
          if (!outcome.ok && !served && i >= 0) {
            point.freezeWaiters.splice(i, 1);
            reject(new Error(`freeze(): no checkpoint: ${outcome.reason}`));
          }
        });
      });
    },
    unfreeze: () => release('unfreeze'),
    restore: () => release('restore'),
    onFreeze(handler) {
      if (typeof handler !== 'function') throw new Error('onFreeze: the handler is not a function');
      point.handler = handler;
      point.arrived();
      return () => {
        if (point.handler === handler) point.handler = null;
      };
    },
    checkpoint: () => mpi.cr.checkpoint(),
  };
}
