import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { defineModule } from '@ssi/core';
import { CheckpointStore, type CrlamModule, MANIFEST_FORMAT } from '@ssi/mpi';
import { CRLAM_SELF_PARAMS } from './params';

/**
 * The mpirun half of `self` (Ch. 7.3.2 with PSC's checkpoint sets, seed `004_…`): each
 * checkpoint is a new series of `<crlam_self_dir>/<job id>`; a series becomes complete when every
 * rank's file is durable and the manifest (with the application schema, for lamrestart) is
 * written; the last `crlam_self_keep` complete series are kept.
 */
const crlamSelf: CrlamModule = defineModule<CrlamModule>({
  ssiApi: '1.0.0',
  type: 'crlam',
  typeApi: '1.0.0',
  name: 'self',
  version: '1.0.0',
  params: CRLAM_SELF_PARAMS,
  query(ctx) {
    return { priority: ctx.params.get<number>('crlam_self_priority') };
  },
  async init(ctx) {
    const root = ctx.params.get<string>('crlam_self_dir') || join(homedir(), '.ssi', 'checkpoints');
    const keep = ctx.params.get<number>('crlam_self_keep');
    const interval = ctx.params.get<number>('crlam_self_interval');
    if (!(keep >= 1)) throw new Error(`crlam_self_keep must be at least 1, got ${keep}`);
    if (!(interval >= 0))
      throw new Error(`crlam_self_interval must be 0 or more seconds, got ${interval}`);
    const store = await CheckpointStore.open(resolve(root, ctx.jobId));
    ctx.verbose(10, `checkpoints of job ${ctx.jobId} go to ${store.dir}`);
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
          module: 'self',
          createdAt: new Date().toISOString(),
          app: ctx.job,
          ranks: [...ranks],
        });
        const pruned = await store.prune(keep);
        const bytes = ranks.reduce((sum, r) => sum + r.bytes, 0);
        return { series: plan.series, dir: store.dir, bytes, pruned };
      },
      async abandonSeries(plan, reason) {
        // The series stays without a manifest: never used, removed by a later prune.
        ctx.verbose(0, `series ${plan.series} abandoned: ${reason}`);
      },
    };
  },
});

export default crlamSelf;
