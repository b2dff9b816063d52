import { ErrorClass, MpiError } from '../errors';
import type { EntryGate } from '../gate';
import type { RpiActions } from '../rpi/types';

/** The selected rpi module, as the quartet needs it (the engine). */
export interface QuartetModule {
  readonly moduleName: string;
  readonly actions: RpiActions;
}

/**
 * The rpi checkpoint/restart quartet (DESIGN.md §4, App. C.2.16-19) around the selected module:
 * interrupt closes the entry gate first (MPI calls from then on wait), continue and restart open
 * it again once the module is ready. A module without the whole quartet is refused by name.
 */
export class RpiQuartet {
  constructor(
    private readonly gate: EntryGate,
    private readonly module: QuartetModule,
  ) {}

  /** Whether the selected module implements the whole quartet. */
  get supported(): boolean {
    const a = this.module.actions;
    return !!(a.interrupt && a.checkpoint && a.continue && a.restart);
  }

  /** Closes the entry gate and interrupts the module: MPI calls from now on wait. */
  async interrupt(): Promise<void> {
    if (!this.supported) throw this.unsupported('interrupt');
    this.gate.close();
    await this.module.actions.interrupt!();
  }

  /** The module readies itself for the checkpoint (drains the network). */
  async checkpoint(): Promise<void> {
    const a = this.module.actions;
    if (!a.checkpoint) throw this.unsupported('checkpoint');
    await a.checkpoint();
  }

  /** The job continues after a checkpoint: the module resumes, the gate opens. */
  async continue(): Promise<void> {
    const a = this.module.actions;
    if (!a.continue) throw this.unsupported('continue');
    await a.continue();
    this.gate.reopen();
  }

  /** The job was restarted from a checkpoint: the module reconnects, the gate opens. */
  async restart(): Promise<void> {
    const a = this.module.actions;
    if (!a.restart) throw this.unsupported('restart');
    await a.restart();
    this.gate.reopen();
  }

  private unsupported(phase: string): MpiError {
    return new MpiError(
      ErrorClass.ERR_OTHER,
      `the rpi module "${this.module.moduleName}" does not support checkpoint/restart (no ${phase}); ` +
        `select a checkpointable one, e.g. --ssi rpi crtcp`,
    );
  }
}
