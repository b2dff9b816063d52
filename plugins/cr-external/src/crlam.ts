import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineModule } from '@ssi/core';
import { CheckpointStore, type CrlamModule, MANIFEST_FORMAT } from '@ssi/mpi';
import { CRLAM_EXTERNAL_PARAMS } from './params';

/** The restore runner (`restore-runner.ts`), built next to this file. */
const RESTORE_RUNNER = fileURLToPath(new URL('./restore-runner.js', import.meta.url));

/**
 * The mpirun half of `external`: each checkpoint is a new series of `<crlam_external_dir>/<job
 * id>`, holding one directory per process for its image and one rank file recording how the
 * image was made (and how to restore it); the series is complete when every rank's checkpointer
 * succeeded and the manifest is written; the last `crlam_external_keep` complete series are kept.
 */
const crlamExternal: CrlamModule = defineModule<CrlamModule>({
  ssiApi: '1.0.0',
  type: 'crlam',
  typeApi: '1.0.0',
  name: 'external',
  version: '1.0.0',
  params: CRLAM_EXTERNAL_PARAMS,
  query(ctx) {
    return { priority: ctx.params.get<number>('crlam_external_priority') };
  },
  async init(ctx) {
    const root =
      ctx.params.get<string>('crlam_external_dir') || join(homedir(), '.ssi', 'checkpoints');
    const keep = ctx.params.get<number>('crlam_external_keep');
    const interval = ctx.params.get<number>('crlam_external_interval');
    if (!(keep >= 1)) throw new Error(`crlam_external_keep must be at least 1, got ${keep}`);
    if (!(interval >= 0)) {
      throw new Error(`crlam_external_interval must be 0 or more seconds, got ${interval}`);
    }
    const store = await CheckpointStore.open(resolve(root, ctx.jobId));
    ctx.verbose(10, `process images of job ${ctx.jobId} go to ${store.dir}`);
    return {
      interval,
      async beginSeries() {
        return { series: await store.nextSeries(), dir: store.dir };
      },
      async commitSeries(plan, ranks) {
        await store.commitSeries({
          format: MANIFEST_FORMAT,
          series: plan.series,
          jobId: ctx.jobId,
          size: ctx.job.size,
          module: 'external',
          createdAt: new Date().toISOString(),
          app: ctx.job,
          ranks: [...ranks],
        });
        const pruned = await store.prune(keep);
        const bytes = ranks.reduce((sum, r) => sum + r.bytes, 0);
        return { series: plan.series, dir: store.dir, bytes, pruned };
      },
      async abandonSeries(plan, reason) {
        ctx.verbose(0, `series ${plan.series} abandoned: ${reason}`);
      },
      // A restart starts the restore runner for each rank, not the program (the images are).
      async restartArgv(seriesDir, rank) {
        return [process.execPath, RESTORE_RUNNER, resolve(seriesDir), String(rank)];
      },
    };
  },
});

export default crlamExternal;
