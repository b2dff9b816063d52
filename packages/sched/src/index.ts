export type { SchedState } from './sched-yield';
export { schedAvailable, schedYield } from './sched-yield';
