import type { SsiContext } from '@ssi/core';
import type { Communicator } from '../comm';
import type { Engine } from '../engine';
import { ErrorClass, MpiError } from '../errors';
import { type JobRuntime, OobTag, type ProcessInfo } from '../job-runtime';
import { type CrmpiChoice, selectCrmpi } from './framework';
import { planRestart, summaryOf } from './image';
import { RankCheckpoints } from './rank-checkpoints';
import { RollbackLog } from './rollback-log';
import { CR_RESTART_ENV, CrMessage, type RestoredRank } from './types';
import { CheckpointApi, type CheckpointOutcome, readerOf } from './user-api';

/**
 * Checkpoint/restart in one rank's `MPI.init` (Ch. 7), in the three steps init needs it:
 * `open` before the GPS exchange (the crmpi module, if asked for; a restarted rank reads its
 * part), `attach` once the engine exists (rollback logging; a restarted rank's sequence numbers
 * and queued messages), `start` once the predefined communicators exist (`mpi.cr` and the rank's
 * checkpoint handler, which tells mpirun the rank is ready).
 */
export class RankCrSetup {
  private constructor(
    private readonly cr: CrmpiChoice | null,
    private readonly restored: RestoredRank | null,
  ) {}

  static async open(
    ctx: SsiContext,
    write: (line: string) => void,
    env: Record<string, string | undefined>,
    rank: number,
  ): Promise<RankCrSetup> {
    const cr = await selectCrmpi(ctx, write);
    const restartDir = env[CR_RESTART_ENV];
    if (!restartDir) return new RankCrSetup(cr, null);
    if (!cr) {
      throw new MpiError(
        ErrorClass.ERR_OTHER,
        `${CR_RESTART_ENV} is set (a restart from ${restartDir}) but no cr module is selected`,
      );
    }
    return new RankCrSetup(cr, await cr.actions.restart(restartDir, rank));
  }

  /** What this rank tells the others in the GPS exchange: its crmpi choice, its restart. */
  describe(mine: ProcessInfo): void {
    if (this.cr) mine.modules.crmpi = this.cr.choice;
    if (this.restored) mine.restart = summaryOf(this.restored.image);
  }

  /** Rollback logging in the engine; a restarted rank continues where its image left off. */
  attach(engine: Engine, all: readonly ProcessInfo[]): void {
    if (!this.cr) return;
    engine.crLog = new RollbackLog(() => engine.activeCount);
    engine.gate.calls = engine.crLog;
    if (!this.restored) return;
    const summaries = all.map((info, r) => {
      if (!info.restart) {
        throw new MpiError(
          ErrorClass.ERR_OTHER,
          `rank ${r} was not restarted from the checkpoint (every rank of a restart must be)`,
        );
      }
      return info.restart;
    });
    engine.applyRestart(planRestart(this.restored.image, summaries));
  }

  /** `mpi.cr`, and with a cr module the rank's checkpoint handler, started. */
  async start(args: {
    ctx: SsiContext;
    engine: Engine;
    runtime: JobRuntime;
    communicators: () => Communicator[];
    verbose(level: number, message: string): void;
  }): Promise<{ api: CheckpointApi; checkpoints: RankCheckpoints | null }> {
    const { runtime } = args;
    const { cr, restored } = this;
    const api = new CheckpointApi(
      cr?.choice.name ?? '',
      restored ? readerOf(restored.sections) : null,
      restored?.series ?? 0,
      () => runtime.control.ask<CheckpointOutcome>(CrMessage.REQUEST, {}, 24 * 3600_000),
      args.ctx.params.get<number>('crmpi_base_safepoint_ms'),
    );
    if (!cr) return { api, checkpoints: null };
    const checkpoints = new RankCheckpoints({
      engine: args.engine,
      control: runtime.control,
      communicators: args.communicators,
      module: cr.actions,
      moduleName: cr.choice.name,
      api,
      runtime,
      rank: runtime.rank,
      size: runtime.size,
      channel: {
        send: (to, bytes) => runtime.oobSend(to, OobTag.CR_STORE, bytes),
        recv: (from) => runtime.oobRecv<Uint8Array>(from, OobTag.CR_STORE),
      },
      verbose: args.verbose,
    });
    await checkpoints.start();
    return { api, checkpoints };
  }
}
