import { spawn } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { AddressAllocator, describeHolder, isLoopback, LAST_OCTET } from './addresses';
import { findSshd, testbedAvailable } from './available';
import { clientOptions, renderSshConfig, renderSshdConfig } from './config';
import { TestbedError } from './errors';
import { disown, own } from './exit-hooks';
import { generateKey } from './keys';
import {
  paths,
  readState,
  type StateHost,
  type TestbedState,
  TMP_PREFIX,
  writeState,
} from './layout';
import { readProc, terminate, terminateSync } from './procs';
import { run } from './run';
import { renderBootSchema } from './schema';
import { removeTestbedDir, testbedProcesses } from './sweep';
import type {
  BootSchemaOptions,
  SshOptions,
  SshResult,
  StartTestbedOptions,
  Testbed,
  TestHost,
} from './types';

const DEFAULT_START_TIMEOUT_MS = 20_000;
const DEFAULT_SSH_TIMEOUT_MS = 30_000;
const MAX_HOSTS = LAST_OCTET - 1;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function bad(message: string): TestbedError {
  return new TestbedError('BAD_OPTIONS', message);
}

function isInt(x: unknown, lo: number, hi: number): x is number {
  return typeof x === 'number' && Number.isInteger(x) && x >= lo && x <= hi;
}

/** Port from the option, else $SSI_TESTBED_PORT, else 22. */
export function resolvePort(port?: number): number {
  if (port !== undefined) {
    if (!isInt(port, 1, 65535)) throw bad(`port must be an integer 1…65535, got ${port}`);
    return port;
  }
  const env = process.env.SSI_TESTBED_PORT;
  if (env === undefined || env === '') return 22;
  const n = Number(env);
  if (!isInt(n, 1, 65535)) {
    throw bad(`SSI_TESTBED_PORT must be a port number 1…65535, got "${env}"; unset it to use 22`);
  }
  return n;
}

function validate(opts: StartTestbedOptions): void {
  if (!isInt(opts.hosts, 1, MAX_HOSTS)) {
    throw bad(`hosts must be an integer 1…${MAX_HOSTS}, got ${opts.hosts}`);
  }
  if (opts.firstAddress !== undefined) {
    const last = opts.firstAddress + opts.hosts - 1;
    if (!isInt(opts.firstAddress, 1, LAST_OCTET) || last > LAST_OCTET) {
      throw bad(
        `firstAddress ${opts.firstAddress} with ${opts.hosts} hosts does not fit in 127.0.0.1…127.0.0.${LAST_OCTET}; ` +
          'pick a smaller firstAddress or omit it to let the testbed choose',
      );
    }
  }
  for (const i of opts.rejectKeyFor ?? []) {
    if (!isInt(i, 0, opts.hosts - 1)) {
      throw bad(`rejectKeyFor holds ${i}, but host indexes run from 0 to ${opts.hosts - 1}`);
    }
  }
  if (opts.startTimeoutMs !== undefined && !(opts.startTimeoutMs > 0)) {
    throw bad(`startTimeoutMs must be positive, got ${opts.startTimeoutMs}`);
  }
}

/** The testbed directory: a fresh 0700 temp dir, or the caller's (absent or empty). */
function prepareDir(dir?: string): string {
  const out = dir === undefined ? join(tmpdir(), `${TMP_PREFIX}XXXXXX`) : resolve(dir);
  if (/[\s"'\\]/.test(out)) {
    throw bad(
      `testbed directory ${JSON.stringify(out)} contains whitespace, quotes or backslashes, which ` +
        'sshd_config cannot hold; choose another dir (or set TMPDIR to a plain path)',
    );
  }
  if (dir === undefined) return mkdtempSync(join(tmpdir(), TMP_PREFIX)); // mode 0700
  if (existsSync(out)) {
    if (!statSync(out).isDirectory() || readdirSync(out).length > 0) {
      throw bad(
        `testbed directory ${out} exists and is not an empty directory; pass a new or empty directory (or omit dir)`,
      );
    }
  } else {
    mkdirSync(out, { recursive: true });
  }
  chmodSync(out, 0o700);
  return out;
}

function tail(file: string, lines = 15, fromByte = 0): string {
  try {
    const text = readFileSync(file).subarray(fromByte).toString('utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function readPid(file: string): number | undefined {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

type SshdStart = { kind: 'up'; pid: number } | { kind: 'in-use' };

/**
 * Starts one sshd in the foreground of its own session (-D, so we see it die; detached, so it
 * outlives an `ssi-testbed up`). Listening once its PidFile holds its pid: sshd writes the
 * PidFile only after its listen socket is bound.
 */
function startSshd(
  sshd: string,
  host: ReturnType<ReturnType<typeof paths>['host']>,
  deadline: number,
) {
  return new Promise<SshdStart>((resolvePromise, reject) => {
    rmSync(host.pidFile, { force: true });
    const logStart = existsSync(host.log) ? statSync(host.log).size : 0;
    const logFd = openSync(host.log, 'a', 0o600);
    const child = spawn(sshd, ['-D', '-e', '-f', host.config], {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C' },
    });
    closeSync(logFd);
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (r: SshdStart | Error) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      child.unref();
      if (r instanceof Error) reject(r);
      else resolvePromise(r);
    };
    child.on('error', (e) =>
      finish(new TestbedError('START_FAILED', `could not start ${sshd}: ${e.message}`)),
    );
    child.on('exit', (code, signal) => {
      const log = tail(host.log, 15, logStart);
      if (/Address already in use/i.test(log)) finish({ kind: 'in-use' });
      else
        finish(
          new TestbedError(
            'START_FAILED',
            `sshd for ${host.config} exited (${signal ?? `code ${code}`}) before listening. Its log:\n${log}`,
          ),
        );
    });
    const poll = () => {
      if (settled) return;
      if (child.pid !== undefined && readPid(host.pidFile) === child.pid) {
        finish({ kind: 'up', pid: child.pid });
        return;
      }
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        finish(
          new TestbedError(
            'START_FAILED',
            `sshd for ${host.config} did not write its PidFile in time. Its log:\n${tail(host.log)}`,
          ),
        );
        return;
      }
      timer = setTimeout(poll, 10);
    };
    poll();
  });
}

class LiveTestbed implements Testbed {
  readonly keyFile: string;
  readonly sshConfigPath: string;
  readonly sshCommand: string[];
  private stopping: Promise<void> | undefined;

  constructor(
    readonly dir: string,
    public hosts: TestHost[],
    readonly port: number,
  ) {
    const p = paths(dir);
    this.keyFile = p.clientKey;
    this.sshConfigPath = p.sshConfig;
    this.sshCommand = ['ssh', '-F', p.sshConfig];
  }

  writeBootSchema(file: string, opts: BootSchemaOptions = {}): string {
    const out = isAbsolute(file) ? file : join(this.dir, file);
    const hosts = opts.hosts ?? this.hosts;
    for (const h of hosts) this.ownHost(h);
    writeFileSync(out, renderBootSchema(hosts, opts.perHost));
    return out;
  }

  async ssh(host: TestHost, command: string, opts: SshOptions = {}): Promise<SshResult> {
    const h = this.ownHost(host);
    return run('ssh', [...this.sshCommand.slice(1), h.address, command], {
      timeoutMs: opts.timeoutMs ?? DEFAULT_SSH_TIMEOUT_MS,
      input: opts.input,
      what: `ssh to ${h.name} (${h.address}) running \`${command}\``,
    });
  }

  stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = this.stopNow().catch((e) => {
        this.stopping = undefined; // let a later call try again
        throw e;
      });
    }
    return this.stopping;
  }

  private async stopNow(): Promise<void> {
    disown(this);
    const left = await terminate(testbedProcesses(this.dir));
    if (left.length > 0) {
      throw new TestbedError(
        'START_FAILED',
        `testbed ${this.dir}: processes ${left.map((t) => t.pid).join(', ')} survived SIGKILL; ` +
          'they are probably stuck in the kernel. The directory was kept; retry stop() or `ssi-testbed down`.',
      );
    }
    removeTestbedDir(this.dir);
  }

  /** Synchronous stop for process-exit handlers. */
  stopSync(): void {
    disown(this);
    terminateSync(testbedProcesses(this.dir));
    removeTestbedDir(this.dir);
  }

  private ownHost(host: TestHost): TestHost {
    const h = this.hosts.find((x) => x.address === host.address);
    if (!h || !isLoopback(h.address)) {
      throw bad(
        `${host.name ?? '?'} (${host.address}) is not a host of the testbed in ${this.dir}; ` +
          `its hosts are ${this.hosts.map((x) => `${x.name} ${x.address}`).join(', ')}`,
      );
    }
    return h;
  }
}

/** ssh args that log in exactly as the ssh_config will, for probing before that file exists. */
function probeArgs(keyFile: string, port: number, user: string, address: string): string[] {
  return [
    ...clientOptions(keyFile, port, user).flatMap(([k, v]) => ['-o', `${k}=${v}`]),
    address,
    'true',
  ];
}

async function waitForLogin(
  name: string,
  address: string,
  rejectsKey: boolean,
  args: string[],
  logFile: string,
  deadline: number,
): Promise<void> {
  let last = '';
  for (;;) {
    try {
      const r = await run('ssh', args, {
        timeoutMs: Math.max(1000, Math.min(10_000, deadline - Date.now())),
        what: `login probe to ${name} (${address})`,
      });
      if (!rejectsKey && r.code === 0) return;
      if (rejectsKey && r.code === 255 && /Permission denied/.test(r.stderr)) return;
      last = `exit ${r.code}: ${r.stderr.trim() || '(no stderr)'}`;
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > deadline) {
      throw new TestbedError(
        'START_FAILED',
        `test host ${name} (${address}) did not ${rejectsKey ? 'refuse' : 'accept'} the ssh login in time. ` +
          `Last attempt: ${last}. sshd log (${logFile}):\n${tail(logFile)}`,
      );
    }
    await sleep(100);
  }
}

function selfIdentity(): { pid: number; startTime: string } {
  return { pid: process.pid, startTime: readProc(process.pid)?.startTime ?? '' };
}

/**
 * Starts `opts.hosts` test hosts, each an sshd of its own on a loopback address, and resolves
 * once every one of them has accepted a real `ssh <address> true` (or, for `rejectKeyFor`,
 * refused it with "Permission denied").
 */
export async function startTestbed(opts: StartTestbedOptions): Promise<Testbed> {
  validate(opts);
  const port = resolvePort(opts.port);
  const avail = testbedAvailable();
  if (!avail.ok) throw new TestbedError('UNAVAILABLE', `cannot start a testbed: ${avail.reason}`);
  const sshd = findSshd()!;
  const user = userInfo().username;
  const deadline = Date.now() + (opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
  const rejects = new Set(opts.rejectKeyFor ?? []);

  const dir = prepareDir(opts.dir);
  const p = paths(dir);
  const state: TestbedState = {
    format: 1,
    createdAt: new Date().toISOString(),
    owner: opts.persistent ? null : selfIdentity(),
    port,
    hosts: [],
  };
  writeState(dir, state);
  const tb = new LiveTestbed(dir, [], port);
  if (!opts.persistent) own(tb);

  try {
    mkdirSync('/run/sshd', { recursive: true, mode: 0o755 }); // sshd's privilege separation dir
    const names = Array.from({ length: opts.hosts }, (_, i) => `h${i + 1}`);
    await Promise.all([
      generateKey(p.clientKey, 'ssi-testbed client'),
      rejects.size > 0 ? generateKey(p.otherKey, 'ssi-testbed key no host uses') : undefined,
      ...names.map((name) => {
        mkdirSync(p.host(name).dir, { mode: 0o700 });
        return generateKey(p.host(name).hostKey, `ssi-testbed host ${name}`);
      }),
    ]);

    const allocator = new AddressAllocator(port, opts.firstAddress);
    // Take the addresses in host order first, so that on an idle machine h1 = 127.0.0.2, ….
    const addresses: string[] = [];
    for (const _ of names) addresses.push(await allocator.take());

    const slots: StateHost[] = names.map((name, i) => ({
      name,
      address: addresses[i]!,
      rejectsKey: rejects.has(i),
    }));
    const record = () => {
      state.hosts = slots;
      writeState(dir, state);
    };
    record();

    await Promise.all(
      slots.map(async (slot) => {
        const hp = p.host(slot.name);
        copyFileSync(
          slot.rejectsKey ? `${p.otherKey}.pub` : `${p.clientKey}.pub`,
          hp.authorizedKeys,
        );
        for (let attempt = 0; ; attempt++) {
          writeFileSync(
            hp.config,
            renderSshdConfig({
              name: slot.name,
              address: slot.address,
              port,
              hostKey: hp.hostKey,
              authorizedKeys: hp.authorizedKeys,
              pidFile: hp.pidFile,
              user,
            }),
            { mode: 0o600 },
          );
          const r = await startSshd(sshd, hp, deadline);
          if (r.kind === 'up') break;
          // Someone bound the address between our check and sshd's bind.
          if (allocator.fixed || attempt >= 10) {
            throw new TestbedError(
              'ADDRESS_IN_USE',
              `test host ${slot.name}: ${slot.address}:${port} is in use, by ${describeHolder(slot.address, port)}`,
            );
          }
          slot.address = await allocator.take();
          record();
        }
        await waitForLogin(
          slot.name,
          slot.address,
          slot.rejectsKey,
          probeArgs(p.clientKey, port, user, slot.address),
          hp.log,
          deadline,
        );
      }),
    );

    tb.hosts = slots.map(({ name, address }) => ({ name, address }));
    writeFileSync(p.sshConfig, renderSshConfig(tb.hosts, clientOptions(p.clientKey, port, user)), {
      mode: 0o600,
    });
    return tb;
  } catch (e) {
    await tb.stop().catch(() => {});
    throw e;
  }
}

/**
 * A handle on a testbed started elsewhere (e.g. by `ssi-testbed up`), from its directory.
 * This process does not own it: it is not stopped when this process exits.
 */
export function attachTestbed(dir: string): Testbed {
  const abs = resolve(dir);
  const state = readState(abs);
  if (!state) {
    throw new TestbedError(
      'NOT_A_TESTBED',
      `${abs} is not a testbed directory (no readable ${paths(abs).state}); ` +
        'pass the directory printed by `ssi-testbed up`',
    );
  }
  return new LiveTestbed(
    abs,
    state.hosts.map(({ name, address }) => ({ name, address })),
    state.port,
  );
}

export interface HostStatus extends TestHost {
  rejectsKey: boolean;
  /** pid of the host's sshd listener, when it is running */
  pid: number | undefined;
  running: boolean;
}

export interface TestbedStatus {
  dir: string;
  port: number;
  owner: TestbedState['owner'];
  hosts: HostStatus[];
}

/** What runs of the testbed in `dir` (by PidFile, checked against the process table). */
export function testbedStatus(dir: string): TestbedStatus {
  const abs = resolve(dir);
  const state = readState(abs);
  if (!state) {
    throw new TestbedError(
      'NOT_A_TESTBED',
      `${abs} is not a testbed directory (no readable testbed.json)`,
    );
  }
  const p = paths(abs);
  return {
    dir: abs,
    port: state.port,
    owner: state.owner,
    hosts: state.hosts.map((h) => {
      const hp = p.host(h.name);
      const pid = readPid(hp.pidFile);
      const info = pid === undefined ? undefined : readProc(pid);
      const running = !!info && info.state !== 'Z' && info.cmdline.includes(`-f ${hp.config}`);
      return { ...h, pid: running ? pid : undefined, running };
    }),
  };
}
