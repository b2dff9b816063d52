import type { ParamRegistry } from '@ssi/core';

/** Parameters of the boot framework base (`boot_base_*`), shared by every boot module. */
export const BOOT_BASE_PARAMS = {
  boot_base_algorithm: {
    type: 'string',
    default: 'linear_windowed',
    help: 'How nodes are started: "linear" (one at a time, each waits for its call back) or "linear_windowed" (up to boot_base_linear_win_size at once)',
  },
  boot_base_linear_win_size: {
    type: 'int',
    default: 5,
    help: 'Most nodes the linear_windowed algorithm has starting (launched, not yet called back) at once',
  },
  boot_base_in_process: {
    type: 'boolean',
    default: true,
    help: "mpirun's private universe, when it is this node alone, runs its lamd inside mpirun (no hboot or lamd process to start); 0: a lamd process of its own, started as lamboot starts one",
  },
  boot_base_timeout: {
    type: 'int',
    default: 60,
    help: 'Seconds one node may take to start (remote launch) and, for lamds, to call back',
  },
} as const;

export function registerBootBaseParams(params: ParamRegistry): void {
  for (const [name, spec] of Object.entries(BOOT_BASE_PARAMS)) {
    if (!params.isRegistered(name)) params.register(name, { ...spec }, 'boot base');
  }
}
