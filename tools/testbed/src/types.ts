/** One test host: an sshd of its own listening on a loopback address. */
export interface TestHost {
  /** "h1", "h2", … in the order of `Testbed.hosts` */
  name: string;
  /** "127.0.0.2", … always inside 127.0.0.0/8 */
  address: string;
}

export interface SshResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface SshOptions {
  /** kill ssh and reject after this long (default 30 000 ms) */
  timeoutMs?: number;
  /** written to the remote command's stdin, then closed (default: empty stdin) */
  input?: string | Buffer;
}

export interface BootSchemaOptions {
  /** which hosts to list (default: all, in order) */
  hosts?: TestHost[];
  /** extra words appended to the line of each host */
  perHost?: (h: TestHost) => string;
}

export interface Testbed {
  /** private directory (0700) holding keys, configs, pid files, logs */
  dir: string;
  hosts: TestHost[];
  /** TCP port every test host's sshd listens on (22 unless SSI_TESTBED_PORT or `port` said else) */
  port: number;
  /** client private key accepted by every host (except those in `rejectKeyFor`) */
  keyFile: string;
  /** ssh_config covering the test hosts (by address and by name) */
  sshConfigPath: string;
  /** the ssh invocation a boot module uses as its agent: `[...sshCommand, address, command]` */
  sshCommand: string[];
  /** Writes `127.0.0.2 cpu=1 <perHost>` lines; a relative `file` is taken inside `dir`. Returns the path. */
  writeBootSchema(file: string, opts?: BootSchemaOptions): string;
  /** Runs `command` on `host` through the real sshd. Rejects only when ssh cannot run or times out. */
  ssh(host: TestHost, command: string, opts?: SshOptions): Promise<SshResult>;
  /** Kills every sshd of the testbed (and what runs under it), waits until gone, removes `dir`. Idempotent. */
  stop(): Promise<void>;
}

export interface StartTestbedOptions {
  /** number of test hosts (1 … 253) */
  hosts: number;
  /**
   * Last octet of the first host's address: host i gets 127.0.0.(firstAddress + i), and the start
   * fails if one of them is taken. When omitted, the first free addresses from 127.0.0.2 upward are
   * used (127.0.0.2, 127.0.0.3, … on an idle machine), so concurrent testbeds never collide.
   */
  firstAddress?: number;
  /** directory to use (created 0700; must be empty or absent). Default: a new os.tmpdir()/ssi-testbed-XXXXXX */
  dir?: string;
  /** host indexes (0-based) whose sshd does not accept the key: "host refuses the key" fault tests */
  rejectKeyFor?: number[];
  /** sshd port (default: $SSI_TESTBED_PORT or 22) */
  port?: number;
  /** how long each host may take to accept a login (default 20 000 ms) */
  startTimeoutMs?: number;
  /**
   * Keep the sshds running when this process exits (what `ssi-testbed up` does). Default false:
   * the testbed is stopped on process exit, SIGINT, SIGTERM and SIGHUP.
   */
  persistent?: boolean;
}
