import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { hostname } from 'node:os';
import { which } from '@ssi/testbed';

const SBIN = ['/usr/sbin', '/usr/local/sbin', '/sbin'];
export const MUNGE_KEY = '/etc/munge/munge.key';
const CLIENTS = ['sbatch', 'srun', 'squeue', 'scontrol', 'scancel', 'sinfo'] as const;

export interface SlurmBinaries {
  munged: string;
  slurmctld: string;
  slurmd: string;
}

/** The daemons, by absolute path, or undefined when one is missing. */
export function findDaemons(): SlurmBinaries | undefined {
  const munged = which('munged', SBIN);
  const slurmctld = which('slurmctld', SBIN);
  const slurmd = which('slurmd', SBIN);
  return munged && slurmctld && slurmd ? { munged, slurmctld, slurmd } : undefined;
}

/** The short host name Slurm uses for this machine (what `hostname -s` prints). */
export function shortHostname(): string {
  return hostname().split('.')[0] ?? hostname();
}

/** The IPv4 addresses `name` resolves to through the system resolver (getent), or []. */
export function resolveIpv4(name: string): string[] {
  try {
    const out = execFileSync('getent', ['ahostsv4', name], { encoding: 'utf8', timeout: 5000 });
    return [
      ...new Set(
        out
          .split('\n')
          .map((l) => l.split(/\s+/)[0] ?? '')
          .filter(Boolean),
      ),
    ];
  } catch {
    return [];
  }
}

const INSTALL_HINT =
  'install them with `.ci/install-system-deps.sh` (as root) or `apt-get install -y slurm-wlm munge`';

/**
 * Whether this machine can run a private one-node Slurm cluster; when not, `reason` says why and
 * what to do.
 */
export function slurmAvailable(): { ok: true } | { ok: false; reason: string } {
  if (process.platform !== 'linux') {
    return { ok: false, reason: `the Slurm fixture needs Linux; this is ${process.platform}` };
  }
  if (process.getuid?.() !== 0) {
    return {
      ok: false,
      reason:
        'the Slurm fixture needs root (slurmd runs jobs as the submitting user and must be root to do so); run the tests as root (as CI does)',
    };
  }
  if (!findDaemons()) {
    return {
      ok: false,
      reason: `munged, slurmctld or slurmd is not installed (packages munge, slurm-wlm); ${INSTALL_HINT}`,
    };
  }
  for (const c of CLIENTS) {
    if (!which(c))
      return { ok: false, reason: `${c} is not on PATH (package slurm-client); ${INSTALL_HINT}` };
  }
  try {
    accessSync(MUNGE_KEY, constants.R_OK);
  } catch {
    return {
      ok: false,
      reason: `${MUNGE_KEY} is missing or unreadable; the munge package creates it (reinstall munge, or run \`mungekey --create\` as root)`,
    };
  }
  const host = shortHostname();
  const addrs = resolveIpv4(host);
  if (addrs.length === 0) {
    return {
      ok: false,
      reason: `this host's name ${host} does not resolve; add "127.0.0.1 ${host}" to /etc/hosts`,
    };
  }
  if (!addrs.every((a) => a.startsWith('127.'))) {
    return {
      ok: false,
      reason: `this host's name ${host} resolves to ${addrs.join(', ')}, not to a loopback address: Slurm's own traffic (srun ↔ slurmstepd) would leave 127.0.0.0/8; add "127.0.0.1 ${host}" to /etc/hosts first`,
    };
  }
  return { ok: true };
}
