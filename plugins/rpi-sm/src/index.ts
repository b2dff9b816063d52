import { defineModule } from '@ssi/core';
import type { RpiModule } from '@ssi/mpi';
import { THREAD_MULTIPLE, THREAD_SINGLE } from '@ssi/mpi';
import { shmUnavailableReason } from '@ssi/shm';
import { params } from './params';
import { openSm } from './sm-rpi';

const requires = [{ type: 'rpi', name: 'tcp', version: '1.0', package: '@ssi/rpi-tcp' }];

const sm: RpiModule = defineModule({
  ssiApi: '1.0.0',
  type: 'rpi' as const,
  typeApi: '2.0.0',
  name: 'sm',
  version: '1.0.0',
  params,
  requires,
  query(ctx) {
    const why = shmUnavailableReason();
    if (why !== null) return `shared memory is unavailable: ${why}`;
    if (ctx.size < 2) return 'a job of one process has no peer to share memory with';
    if (ctx.maxNodeRanks === 1) {
      return 'no two ranks of this job share a node (the launcher says 1 rank per node): tcp serves them';
    }
    return {
      priority: ctx.params.get<number>('rpi_sm_priority'),
      threadMin: THREAD_SINGLE,
      threadMax: THREAD_MULTIPLE,
    };
  },
  init(procs, limits, host) {
    return openSm(procs, limits, host);
  },
});

export default sm;
export { params } from './params';
export type { WaitChoice, WaitMode } from './wait-mode';
export { chooseWaitMode, WAIT_MODES } from './wait-mode';
