/**
 * What an rpi module's `fastrecv` answers (`RpiActions.fastrecv`): the receive completed, the
 * module took nothing and the MPI layer runs the receive as usual, or the module waited its
 * whole spin bound without a message (the MPI layer then waits without spinning again, so a
 * receive never spins longer than the module's bound before it gives the event loop a turn).
 */
export const FastRecv = {
  DONE: 1,
  DECLINED: 0,
  WAITED: 2,
} as const;
export type FastRecvResult = (typeof FastRecv)[keyof typeof FastRecv];
