import type { ParamSpec } from '@ssi/core';

/** Parameters of the mpirun half of `self` (`--ssi crlam_self_<name> value`). */
export const CRLAM_SELF_PARAMS = {
  dir: {
    type: 'string',
    default: '',
    help: 'Directory under which each job gets <job id>/series-<n>/ (default: ~/.ssi/checkpoints)',
  },
  keep: {
    type: 'int',
    default: 2,
    help: 'How many complete checkpoint series of a job are kept (older ones are removed)',
  },
  interval: {
    type: 'int',
    default: 0,
    help: 'Seconds between automatic checkpoints of the job (0: only on request)',
  },
} satisfies Record<string, ParamSpec>;
