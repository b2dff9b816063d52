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
  plan: {
    type: 'string',
    default: 'local',
    help: 'Storage plan of each series: local (files only in dir), duplicate (each file also copied to second_dir after the ranks go on) or parity (XOR of each set of parity_set ranks written to second_dir)',
  },
  second_dir: {
    type: 'string',
    default: '',
    help: 'The second location (a directory standing for the file server) of the duplicate and parity plans; each job gets <second_dir>/<job id>/series-<n>/',
  },
  parity_set: {
    type: 'int',
    default: 4,
    help: 'Ranks per parity set of the parity plan (≥ 2; placed on different nodes where possible): one lost file per set can be rebuilt',
  },
  copy_timeout: {
    type: 'int',
    default: 600,
    help: "Seconds mpirun waits for the duplicate plan's copies before the series is given up as incomplete",
  },
  interval: {
    type: 'int',
    default: 0,
    help: 'Seconds between automatic checkpoints of the job (0: only on request)',
  },
} satisfies Record<string, ParamSpec>;
