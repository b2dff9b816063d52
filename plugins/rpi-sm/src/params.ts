import type { ParamSpec } from '@ssi/core';

/** The module's parameters (`rpi_sm_<name>`), with defaults and help as `laminfo` shows them. */
export const params = {
  priority: {
    type: 'int',
    default: 50,
    help: 'Priority of the sm rpi module (0-100), above tcp (20): chosen whenever at least two ranks of the job share a node and shared memory works here',
  },
  wait: {
    type: 'string',
    default: 'hybrid',
    help: "How a rank waits for on-node messages: spin (usysv: poll shared memory, lowest latency, burns a core), block (sysv: no spin of its own; the shared memory is looked at once per event-loop turn during the MPI layer's polling window, mpi_base_poll_us, then the rank sleeps in the futex helper and frees the core) or hybrid (spin up to rpi_sm_spin_us, then as block). On an oversubscribed node (more ranks than cores) the default hybrid becomes block; an explicit setting is kept",
  },
  spin_us: {
    type: 'int',
    default: 50,
    help: 'Microseconds a waiting MPI call spins on shared memory (completing without an event-loop turn when its message comes) before it sleeps (hybrid) or yields one event-loop turn to timers and the tcp half (spin); block mode does not spin',
  },
  short: {
    type: 'int',
    default: 8192,
    help: 'Postbox size S in bytes: an on-node message whose 32-byte envelope and payload fit travels in one postbox record; longer payloads go through the pool',
  },
  pool: {
    type: 'int',
    default: 8388608,
    help: 'Bytes of the shared pool for long on-node messages (one per node and job); long messages stream through it in chunks, so it bounds memory, not message size',
  },
  single_copy: {
    type: 'int',
    default: 1,
    help: "Long on-node messages (above rpi_sm_short): 1 = the receiver copies the body straight out of the sender's memory into the receive buffer (Linux cross-memory attach, process_vm_readv: one copy, as Open MPI's vader); 0 = through the shared pool (two copies). Where the kernel refuses it, sm falls back to the pool by itself",
  },
  split: {
    type: 'int',
    default: 32768,
    help: "With rpi_sm_single_copy: a long message of at least this many bytes is copied by both processes at once, the receiver reading the first half out of the sender's memory while the sender writes the second half into the receive buffer (process_vm_writev); 0 = the receiver copies it all",
  },
  attach_timeout: {
    type: 'int',
    default: 30000,
    help: 'Milliseconds a rank waits during MPI.init for the lowest rank of its node to create the shared segment',
  },
} satisfies Record<string, ParamSpec>;
