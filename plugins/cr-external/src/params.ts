import type { ParamSpec } from '@ssi/core';

/** Parameters of the mpirun half (`--ssi crlam_external_<name> value`). */
export const CRLAM_EXTERNAL_PARAMS = {
  dir: {
    type: 'string',
    default: '',
    help: 'Directory under which each job gets <job id>/series-<n>/ with the process images (default: ~/.ssi/checkpoints)',
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

/** Parameters of the rank half (`--ssi crmpi_external_<name> value`; mpirun passes them on). */
export const CRMPI_EXTERNAL_PARAMS = {
  backend: {
    type: 'string',
    default: 'generic',
    help: 'Who saves the process: generic (the checkpoint_cmd / restart_cmd you give), criu, or hooks (a checkpointer in the process, through checkpointerHooks(mpi))',
  },
  checkpoint_cmd: {
    type: 'string',
    default: '',
    help: 'generic: shell command that saves one process, run on its node outside its process tree; placeholders {pid} {rank} {node} {host} {image} {series} {job}',
  },
  restart_cmd: {
    type: 'string',
    default: '',
    help: 'generic: shell command that restores one process from {image} (recorded, filled in, in each rank file); same placeholders',
  },
  restore_timeout: {
    type: 'int',
    default: 60,
    help: 'Seconds a restart (lamrestart of a series of process images) waits for each restored process to join the new job before it fails naming the rank',
  },
  timeout: {
    type: 'int',
    default: 600,
    help: 'Seconds a checkpoint command (or the in-process checkpointer) may take before the series is given up',
  },
  criu: {
    type: 'string',
    default: 'criu',
    help: 'criu: the criu program (path or name on PATH; run as root or with CAP_CHECKPOINT_RESTORE)',
  },
  criu_args: {
    type: 'string',
    default: '',
    help: 'criu: extra options added to both criu dump and criu restore (e.g. --ghost-limit 16M)',
  },
} satisfies Record<string, ParamSpec>;
