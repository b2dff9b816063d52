import { dirname } from 'node:path';
import { defineModule } from '@ssi/core';
import { CheckpointStore, type CrmpiModule, decodeImage, encodeImage } from '@ssi/mpi';
import { MPI_SECTION, seriesOfDir } from './sections';

/**
 * The rank half of `self` (Ch. 7.3.2): a checkpoint is the program's own state (what its
 * `mpi.cr.onCheckpoint` handlers put) plus the MPI layer's image (messages that were in flight
 * or queued, and the rollback record), written as this rank's file of the series. A restarted
 * rank reads its file back at `MPI.init`.
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
        return record;
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
