import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** First executable `name` on PATH or in the extra directories. */
export function which(name: string, extraDirs: string[] = []): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), ...extraDirs].filter(Boolean);
  for (const d of dirs) {
    const f = join(d, name);
    if (executable(f)) return f;
  }
  return undefined;
}

/** sshd must be started by absolute path (it re-executes itself). */
export function findSshd(): string | undefined {
  return which('sshd', ['/usr/sbin', '/usr/local/sbin', '/sbin']);
}

const INSTALL_HINT =
  'install it with `.ci/install-system-deps.sh` (as root) or `apt-get install -y openssh-server`';

/** Whether this machine can run a testbed; when not, `reason` says why and what to do. */
export function testbedAvailable(): { ok: true } | { ok: false; reason: string } {
  if (process.platform !== 'linux') {
    return {
      ok: false,
      reason: `the testbed needs Linux (it reads /proc and binds 127.0.0.N); this is ${process.platform}`,
    };
  }
  if (process.getuid?.() !== 0) {
    return {
      ok: false,
      reason:
        'the testbed needs root: its sshds listen on port 22 and log in as the current user; run the tests as root (as CI does)',
    };
  }
  if (!findSshd())
    return { ok: false, reason: `sshd (openssh-server) is not installed; ${INSTALL_HINT}` };
  for (const tool of ['ssh', 'ssh-keygen']) {
    if (!which(tool)) {
      return { ok: false, reason: `${tool} (openssh-client) is not on PATH; ${INSTALL_HINT}` };
    }
  }
  return { ok: true };
}
