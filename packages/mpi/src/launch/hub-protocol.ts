import type { OobAddress } from '@ssi/lam';

/**
 * The conversation between the processes of a job and its hub (the `mpirun` that started them,
 * or rank 0 under `mpirun -nw`), carried as out-of-band messages through the lamds. The hub plays
 * mpirun's part of Ch. 5.1.2: it collates the GPS exchange, hands out the roster every rank
 * addresses the others by, hears aborts and finalizes, and carries the job control channel
 * (typed messages both ways, `HubControl` / `RankControl`).
 */

/** OOB tags of the hub conversation; far above the MPI layer's own out-of-band tags. */
export const HubTag = {
  /** rank → hub: I am rank r, reachable at this address. */
  HELLO: 0x5_0001,
  /** hub → rank: every rank's address, by rank. */
  ROSTER: 0x5_0002,
  /** rank → hub: my value for gather round n. */
  GATHER: 0x5_0003,
  /** hub → rank: every value of round n, by rank. */
  GATHERED: 0x5_0004,
  /** rank → hub: end the whole job. */
  ABORT: 0x5_0005,
  /** rank → hub: I finalized. */
  FIN: 0x5_0006,
  /** hub → rank: finalize acknowledged, you may exit. */
  FINACK: 0x5_0007,
  /** rank → hub: a job control message (`ControlUp`, see control/control-protocol.ts). */
  CONTROL_UP: 0x5_0008,
  /** hub → rank: a job control message or the answer to an ask (`ControlDown`). */
  CONTROL_DOWN: 0x5_0009,
} as const;

/** Rank-to-rank out-of-band messages of the MPI layer (`JobRuntime.oobSend`) use this + tag. */
export const RANK_OOB_TAG_BASE = 0x10_0000;

export interface HelloMsg {
  jobId: string;
  rank: number;
  address: OobAddress;
}

export interface RosterMsg {
  addresses: OobAddress[];
}

export interface GatherMsg {
  rank: number;
  round: number;
  value: unknown;
}

export interface GatheredMsg {
  round: number;
  values: unknown[];
}

export interface AbortMsg {
  rank: number;
  code: number;
  message: string;
  /** The abort follows the loss of another process: that loss, not this abort, is the cause. */
  peerLost?: boolean;
}

export interface FinMsg {
  rank: number;
}

/** Environment `mpirun` adds to the job variables of `JOB_ENV` for the lamd-started runtime. */
export const HUB_ENV = {
  /** `node:proc` of the hub, or `self` in the process that is the hub (rank 0 under -nw). */
  HUB: 'SSI_JOB_HUB',
} as const;

export function formatAddress(a: OobAddress): string {
  return `${a.node}:${a.proc}`;
}

export function parseAddress(text: string, what: string): OobAddress {
  const m = /^(\d+):(\d+)$/.exec(text);
  if (!m) throw new Error(`${what}="${text}" is not a node:proc address`);
  return { node: Number(m[1]), proc: Number(m[2]) };
}
