import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { defineModule, type ParamRegistry } from '@ssi/core';
import {
  CheckpointStore,
  type CrlamModule,
  continuesBeforeCommit,
  MANIFEST_FORMAT,
  pruneRedundancy,
  rankRecordOf,
  redundancyOfSeries,
  type StoragePlan,
  storagePlanOf,
} from '@ssi/mpi';
import { CRLAM_SELF_PARAMS } from './params';

/**
 * The mpirun half of `self` (Ch. 7.3.2 with PSC's checkpoint sets, seed `004_…`): each
 * checkpoint is a new series of `<crlam_self_dir>/<job id>`; a series becomes complete when every
 * rank's file is durable, the storage plan's redundancy (`crlam_self_plan`) is durable too, and
 * the manifest (with the application schema, for lamrestart) is written; the last
 * `crlam_self_keep` complete series are kept.
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
    const copyTimeout = ctx.params.get<number>('crlam_self_copy_timeout');
    if (!(keep >= 1)) throw new Error(`crlam_self_keep must be at least 1, got ${keep}`);
    if (!(interval >= 0))
      throw new Error(`crlam_self_interval must be 0 or more seconds, got ${interval}`);
    if (!(copyTimeout >= 1)) {
      throw new Error(`crlam_self_copy_timeout must be at least 1 second, got ${copyTimeout}`);
    }
    const plan = planOf(ctx.params, root, ctx.jobId);
    const store = await CheckpointStore.open(resolve(root, ctx.jobId));
    ctx.verbose(10, `checkpoints of job ${ctx.jobId} go to ${store.dir} (plan ${plan.name})`);
    return {
      interval,
      continueBeforeCommit: continuesBeforeCommit(plan),
      async beginSeries() {
        return { series: await store.nextSeries(), dir: store.dir, storage: plan };
      },
      async commitSeries(series, ranks) {
        const redundancy = await redundancyOfSeries(plan, series.series, ranks, copyTimeout * 1000);
        await store.commitSeries({
          format: MANIFEST_FORMAT,
          series: series.series,
          jobId: ctx.jobId,
          size: ctx.job.size,
          module: 'self',
          createdAt: new Date().toISOString(),
          app: ctx.job,
          ranks: ranks.map(rankRecordOf),
          ...(redundancy ? { redundancy } : {}),
        });
        const pruned = await store.prune(keep);
        await pruneRedundancy(plan, pruned);
        const bytes = ranks.reduce((sum, r) => sum + r.bytes, 0);
        return { series: series.series, dir: store.dir, bytes, pruned };
      },
      async abandonSeries(series, reason) {
        // The series stays without a manifest: never used, removed by a later prune.
        ctx.verbose(0, `series ${series.series} abandoned: ${reason}`);
      },
    };
  },
});

/** The storage plan from `crlam_self_plan`, `_second_dir`, `_parity_set`; the job's own second dir. */
function planOf(params: ParamRegistry, root: string, jobId: string): StoragePlan {
  const plan = storagePlanOf({
    plan: params.get<string>('crlam_self_plan'),
    secondDir: params.get<string>('crlam_self_second_dir'),
    setSize: params.get<number>('crlam_self_parity_set'),
    primaryDir: root,
    names: {
      plan: 'crlam_self_plan',
      secondDir: 'crlam_self_second_dir',
      setSize: 'crlam_self_parity_set',
    },
  });
  return plan.name === 'local' ? plan : { ...plan, secondDir: join(plan.secondDir, jobId) };
}

export default crlamSelf;
