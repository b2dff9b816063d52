import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where things live inside a testbed directory. The sshd config file name is the marker by
 * which stray testbed sshds are found in the process table, whatever directory they use.
 */
export const STATE_FILE = 'testbed.json';
export const SSHD_CONFIG_NAME = 'ssi-testbed-sshd.conf';
export const TMP_PREFIX = 'ssi-testbed-';
export const PID_FILE_NAME = 'sshd.pid';

export const paths = (dir: string) => ({
  state: join(dir, STATE_FILE),
  clientKey: join(dir, 'client_key'),
  otherKey: join(dir, 'other_key'),
  sshConfig: join(dir, 'ssh_config'),
  schema: join(dir, 'hostfile'),
  host: (name: string) => {
    const h = join(dir, name);
    return {
      dir: h,
      config: join(h, SSHD_CONFIG_NAME),
      hostKey: join(h, 'host_key'),
      authorizedKeys: join(h, 'authorized_keys'),
      pidFile: join(h, PID_FILE_NAME),
      log: join(h, 'sshd.log'),
    };
  },
});

/** `-f /some/dir/h3/ssi-testbed-sshd.conf` in an sshd command line → the testbed directory. */
export function dirFromSshdCmdline(cmdline: string): string | undefined {
  const m = new RegExp(`-f (\\S+)/h\\d+/${SSHD_CONFIG_NAME.replace(/\./g, '\\.')}(?:\\s|$)`).exec(
    cmdline,
  );
  return m?.[1];
}

export interface StateHost {
  name: string;
  address: string;
  rejectsKey: boolean;
}

/** testbed.json: written before anything is started, so a crash always leaves a findable owner. */
export interface TestbedState {
  format: 1;
  createdAt: string;
  /** the process that owns the testbed and stops it on exit; null for `ssi-testbed up` */
  owner: { pid: number; startTime: string } | null;
  port: number;
  hosts: StateHost[];
}

export function writeState(dir: string, state: TestbedState): void {
  const file = paths(dir).state;
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

export function readState(dir: string): TestbedState | undefined {
  const file = paths(dir).state;
  if (!existsSync(file)) return undefined;
  try {
    const s = JSON.parse(readFileSync(file, 'utf8')) as TestbedState;
    return s.format === 1 && Array.isArray(s.hosts) ? s : undefined;
  } catch {
    return undefined;
  }
}
