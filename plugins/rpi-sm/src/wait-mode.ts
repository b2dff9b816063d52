import { availableParallelism } from 'node:os';
import type { ParamRegistry } from '@ssi/core';
import { ErrorClass, MpiError } from '@ssi/mpi';

export const WAIT_MODES = ['spin', 'block', 'hybrid'] as const;
export type WaitMode = (typeof WAIT_MODES)[number];

/** How this process waits for on-node messages, and why (for `rpi_verbose` and the tests). */
export interface WaitChoice {
  mode: WaitMode;
  /** Event-loop spin before sleeping (hybrid) or yielding for one turn (spin), µs. */
  spinUs: number;
  /** The futex helper thread spins this long before FUTEX_WAIT, µs (spin mode: it never sleeps long). */
  helperSpinUs: number;
  /** The node's segment lock: spin (usysv) or block (sysv). */
  lock: 'spin' | 'block';
  oversubscribed: boolean;
  reason: string;
}

/** In spin mode the helper thread polls the doorbell this long before sleeping (the bound allowed). */
const HELPER_SPIN_FOREVER_US = 1_000_000;

/**
 * The wait mode from `rpi_sm_wait` / `rpi_sm_spin_us` and the node's load: `localRanks` of the
 * job share a node with `cores` cores. Oversubscribed, the default (hybrid) becomes block, since
 * a spinning rank would take the core its peer needs to answer; a mode the user set is kept.
 */
export function chooseWaitMode(
  registry: ParamRegistry,
  localRanks: number,
  cores = availableParallelism(),
): WaitChoice {
  const asked = registry.lookup('rpi_sm_wait');
  const mode = String(asked.value) as WaitMode;
  if (!WAIT_MODES.includes(mode)) {
    throw new MpiError(
      ErrorClass.ERR_ARG,
      `rpi_sm_wait must be one of ${WAIT_MODES.join(', ')}, got "${String(asked.value)}" (from ${asked.source})`,
    );
  }
  const spinUs = Number(registry.get('rpi_sm_spin_us'));
  if (!Number.isInteger(spinUs) || spinUs < 0 || spinUs > 1_000_000) {
    throw new MpiError(
      ErrorClass.ERR_ARG,
      `rpi_sm_spin_us must be an integer from 0 to 1000000 microseconds, got ${spinUs}`,
    );
  }
  const oversubscribed = localRanks > cores;
  const load = `${localRanks} ranks on this node, ${cores} cores`;
  if (oversubscribed && asked.source === 'default' && mode !== 'block') {
    return block(true, `oversubscribed (${load}): ${mode} would spin, so block`);
  }
  if (mode === 'block') return block(oversubscribed, `rpi_sm_wait block (${load})`);
  const why = `rpi_sm_wait ${mode} from ${asked.source} (${load})`;
  if (mode === 'spin') {
    // A spinning helper thread per rank needs a core of its own besides the rank's: without
    // one it takes the core the peer needs to answer (measured: 1 MiB at a third of the speed).
    const helperCores = cores >= 2 * localRanks;
    return {
      mode,
      spinUs,
      helperSpinUs: helperCores ? HELPER_SPIN_FOREVER_US : 0,
      lock: 'spin',
      oversubscribed,
      reason: why,
    };
  }
  return { mode, spinUs, helperSpinUs: 0, lock: 'block', oversubscribed, reason: why };
}

function block(oversubscribed: boolean, reason: string): WaitChoice {
  return { mode: 'block', spinUs: 0, helperSpinUs: 0, lock: 'block', oversubscribed, reason };
}
