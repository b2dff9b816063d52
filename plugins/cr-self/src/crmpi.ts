import { dirname, join } from 'node:path';
import { defineModule } from '@ssi/core';
import {
  CheckpointStore,
  type CrmpiModule,
  decodeImage,
  encodeImage,
  protectAfterContinue,
  protectInCheckpoint,
  type StoragePlan,
} from '@ssi/mpi';
import { MPI_SECTION, seriesOfDir } from './sections';

/**
 * The rank half of `self` (Ch. 7.3.2): a checkpoint is the program's own state (what its
 * `mpi.cr.onCheckpoint` handlers put) plus the MPI layer's image (messages that were in flight
 * or queued, and the rollback record), written as this rank's file of the series, then protected
 * by the series's storage plan (the store's `protectInCheckpoint` while the job is held,
 * `protectAfterContinue` once it goes on). A restarted rank reads its file back at `MPI.init`.
 */
const crmpiSelf: CrmpiModule = defineModule<CrmpiModule>({
  ssiApi: '1.0.0',
  type: 'crmpi',
  typeApi: '1.0.0',
  name: 'self',
  version: '1.0.0',
  query(ctx) {
    return { priority: ctx.params.get<number>('crmpi_self_priority') };
  },
  init(ctx) {
    /** The file of the last series, for the plan's work after the rank continues. */
    let written: { plan: StoragePlan; series: number; rank: number; path: string } | null = null;
    /** Copies still travelling to the second location (finalize waits for them). */
    const travelling = new Set<Promise<void>>();
    return {
      async checkpoint(work) {
        const { point } = work;
        const sections = await work.applicationSections();
        sections.push({ name: MPI_SECTION, bytes: encodeImage(work.image) });
        const store = await CheckpointStore.open(point.dir);
        const record = await store.writeRankFile(point.series, point.rank, sections, {
          jobId: point.jobId,
          size: point.size,
          module: 'self',
        });
        ctx.verbose(10, `series ${point.series}: wrote ${record.file} (${record.bytes} bytes)`);
        const plan = point.storage ?? { name: 'local' };
        const path = join(store.dir, record.file);
        written = { plan, series: point.series, rank: point.rank, path };
        const parity = await protectInCheckpoint({
          ...written,
          nodeOf: work.nodeOf,
          channel: work.channel,
        });
        return parity ? { ...record, parity } : record;
      },
      async continue(series) {
        if (written?.series !== series) return;
        const copy = protectAfterContinue(written)
          .catch((err) => {
            ctx.verbose(0, `series ${series}: the copy to the second location failed: ${err}`);
          })
          .finally(() => travelling.delete(copy));
        travelling.add(copy);
        written = null;
      },
      async finalize() {
        await Promise.all(travelling);
      },
      async restart(seriesDir, rank) {
        const series = seriesOfDir(seriesDir);
        const store = await CheckpointStore.open(dirname(seriesDir), { create: false });
        const file = await store.readRankFile(series, rank);
        const mpi = file.sections.get(MPI_SECTION);
        const where = `rank ${rank}'s file of ${seriesDir}`;
        if (!mpi) throw new Error(`${where}: has no MPI image (not written by the self module)`);
        return { image: decodeImage(mpi, where), sections: file.sections, series };
      },
    };
  },
});

export default crmpiSelf;
