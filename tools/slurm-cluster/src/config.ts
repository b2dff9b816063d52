import { join } from 'node:path';

export interface ClusterLayout {
  dir: string;
  conf: string;
  mungeSocket: string;
  mungePid: string;
  mungeLog: string;
  mungeSeed: string;
  stateDir: string;
  spoolDir: string;
  jobsDir: string;
  ctldPid: string;
  ctldLog: string;
  slurmdPid: string;
  slurmdLog: string;
  owner: string;
}

export function layout(dir: string): ClusterLayout {
  return {
    dir,
    conf: join(dir, 'slurm.conf'),
    mungeSocket: join(dir, 'munge.sock'),
    mungePid: join(dir, 'munged.pid'),
    mungeLog: join(dir, 'munged.log'),
    mungeSeed: join(dir, 'munge.seed'),
    stateDir: join(dir, 'state'),
    spoolDir: join(dir, 'spool'),
    jobsDir: join(dir, 'jobs'),
    ctldPid: join(dir, 'slurmctld.pid'),
    ctldLog: join(dir, 'slurmctld.log'),
    slurmdPid: join(dir, 'slurmd.pid'),
    slurmdLog: join(dir, 'slurmd.log'),
    owner: join(dir, 'cluster.json'),
  };
}

export interface ConfOptions {
  clusterName: string;
  host: string;
  cpus: number;
  ctldPort: number;
  slurmdPort: number;
}

/**
 * A one-node cluster whose every file lives under the fixture's directory. Root runs both
 * daemons; munge authenticates through the fixture's own munged socket; nothing is accounted.
 */
export function slurmConf(l: ClusterLayout, o: ConfOptions): string {
  const lines = [
    '# Written by @ssi/slurm-cluster: a private one-node cluster for tests.',
    `ClusterName=${o.clusterName}`,
    `SlurmctldHost=${o.host}(127.0.0.1)`,
    'SlurmUser=root',
    'SlurmdUser=root',
    `SlurmctldPort=${o.ctldPort}`,
    `SlurmdPort=${o.slurmdPort}`,
    'AuthType=auth/munge',
    `AuthInfo=socket=${l.mungeSocket}`,
    'CredType=cred/munge',
    `StateSaveLocation=${l.stateDir}`,
    `SlurmdSpoolDir=${l.spoolDir}`,
    `SlurmctldPidFile=${l.ctldPid}`,
    `SlurmdPidFile=${l.slurmdPid}`,
    `SlurmctldLogFile=${l.ctldLog}`,
    `SlurmdLogFile=${l.slurmdLog}`,
    'ProctrackType=proctrack/linuxproc',
    'TaskPlugin=task/none',
    'SelectType=select/cons_tres',
    'SelectTypeParameters=CR_Core',
    'ReturnToService=2',
    'MpiDefault=none',
    'SwitchType=switch/none',
    'JobCompType=jobcomp/none',
    'AccountingStorageType=accounting_storage/none',
    'JobAcctGatherType=jobacct_gather/none',
    // finished jobs stay visible to squeue -t all / scontrol for ten minutes
    'MinJobAge=600',
    // scancel: SIGTERM first, SIGKILL 5 s later (Slurm's default is 30 s)
    'KillWait=5',
    `NodeName=${o.host} NodeAddr=127.0.0.1 CPUs=${o.cpus} State=UNKNOWN`,
    `PartitionName=debug Nodes=${o.host} Default=YES MaxTime=INFINITE State=UP`,
  ];
  return `${lines.join('\n')}\n`;
}
