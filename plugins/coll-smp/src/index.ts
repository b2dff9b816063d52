/** @ssi/coll-smp: the smp coll module (MagPIe's hierarchical collectives). */
import smp from './module';

export { declineReason } from './eligibility';
export type { SmpSettings } from './params';
export { readSmpSettings, SMP_PARAMS } from './params';
export default smp;
