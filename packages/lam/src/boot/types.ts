import type { ParamRegistry, SsiModule, VerboseStream } from '@ssi/core';
import { FRAMEWORKS } from '@ssi/core';
import type { UniverseNode } from '../universe';

/**
 * The boot framework's interface (Ch. 4.1.4, App. B.2), type API 1.1.0. A module launches
 * processes on nodes; the framework base supplies boot schema parsing, node verification, the
 * linear and linear-windowed algorithms and the TCP rendezvous, so that a module can be little
 * more than `startRteProc`.
 */

/** Where the module is initialised (App. B.2.2). */
export type BootLocation = 'root' | 'interior' | 'leaf';

/** Which run-time environment process to start on a node (App. B.1.4). */
export type RteProcKind = 'lamd' | 'recon' | 'wipe';

/** `NOTNODEID`: an entry that takes a place in the table but is skipped by every algorithm. */
export const NOT_NODE_ID = -1;

/** One node of a boot (LAM's `struct lamnode`, App. B.1.2). */
export interface BootNode {
  /** 0 … N-1, or NOT_NODE_ID */
  id: number;
  /** as written in the boot schema (or given to lamgrow) */
  name: string;
  /** IPv4 address; filled by verifyNodes when the schema gave a name */
  address: string;
  cpus: number;
  /** login name for this host (`user=`), when it differs from the booting user */
  user?: string;
  /** installation prefix on this host (`prefix=`): executables are `<prefix>/bin/...` */
  prefix?: string;
  /** false for `schedule=no` (LAM's NT_WASTE) */
  schedulable: boolean;
  /** NT_BOOT: start a process here; cleared on nodes that were started */
  boot: boolean;
  /** NT_ORIGIN: the node lamboot runs on */
  origin: boolean;
  /** NT_ME: this process runs on that node */
  me: boolean;
  /** every key=value of the schema line, including the ones above */
  keyval: Record<string, string>;
  /** where the node was defined, for messages */
  where?: { file: string; line: number };
  /** filled by the rendezvous: the lamd's port and pid */
  port?: number;
  pid?: number;
}

/** What the command line gave the boot (App. B.2.4's `bhost_schema_args`). */
export type BootArgs =
  | { kind: 'schema'; file?: string }
  | {
      kind: 'host';
      host: string;
      /** boot schema words for the host: cpu=2, prefix=/opt/ssi, user=alice, schedule=no */
      words?: string[];
      nodeId?: number;
    };

/** Services the framework gives a module, valid for one boot. */
export interface BootContext {
  params: ParamRegistry;
  verbose: VerboseStream;
  /** the universe secret (lamboot creates it; lamgrow reads it from the session directory) */
  secret: Buffer;
  /** LAM_MPI_SESSION_SUFFIX of this universe, if any */
  sessionSuffix?: string;
  /** the name of this host in schemas (LAM_MPI_SESSION_HOST, else the host name) */
  localHost: string;
  /** boot_base_timeout in milliseconds: one node's launch plus its call back */
  timeoutMs: number;
  /** -d: launchers pass debug on to what they start */
  debug: boolean;
  /** explicit SSI settings (LAM_MPI_SSI_*) to hand to every lamd */
  ssiEnv: Record<string, string>;
  /** lamgrow: the running universe */
  universe?: UniverseNode[];
  /** lamgrow: the id of the node this process runs on */
  localNodeId?: number;
  /** the process the universe belongs to: the origin's lamd halts once it is gone */
  owner?: { pid: number; startTime?: string };
  /** non-fatal problems (duplicate hosts, ...) for the user */
  warn(message: string): void;
}

/** What `startRteProc` is asked to run on one node. */
export interface RteLaunch {
  which: RteProcKind;
  /**
   * The remote command: `hboot`, or `<prefix>/bin/hboot`. It reads `stdin` and prints one line
   * on success. Secrets travel only in `stdin`.
   */
  command: string[];
  stdin: string;
  timeoutMs: number;
}

/** What a launched hboot printed. */
export interface RteOutcome {
  stdout: string;
  stderr: string;
}

export interface StartOptions {
  /** run the rendezvous (lamd only); recon and wipe do not */
  rendezvous: boolean;
  /** keep going after a node failed (recon and wipe report every node) */
  continueOnError?: boolean;
  /** called as each node is up (joined the rendezvous, or finished recon/wipe) */
  onNode?: (node: BootNode, outcome: RteOutcome) => void;
  /** called when a node failed */
  onNodeError?: (node: BootNode, error: Error) => void;
}

export interface StartResult {
  /** how many processes were started (the ones that now may need cleaning up) */
  started: number;
  failures: { node: BootNode; error: Error }[];
}

/** The module's actions (App. B.2, Figure B.7). */
export interface BootActions {
  /** [Launch] look at the command line (B.2.4) */
  parseOptions(args: BootArgs): void | Promise<void>;
  /** [Launch] the node list, with origin and CPU counts (B.2.5) */
  allocateNodes(): BootNode[] | Promise<BootNode[]>;
  /** [Launch] last sanity checks: names resolve, the local node is there, the 127.0.0.1 rule (B.2.6) */
  verifyNodes(nodes: BootNode[]): void | Promise<void>;
  /** [Launch] once-per-boot setup before anything starts (B.2.7) */
  prepareBoot(nodes: BootNode[]): void | Promise<void>;
  /** [Launch] start `which` on every node marked `boot` (B.2.8); usually a base algorithm */
  startRteProcs(nodes: BootNode[], which: RteProcKind, options: StartOptions): Promise<StartResult>;
  /** [Launch] release what allocateNodes took (B.2.9) */
  deallocateNodes(nodes: BootNode[]): void | Promise<void>;

  /** [Algorithm] start a run-time process on one node (B.2.11) */
  startRteProc?(node: BootNode, launch: RteLaunch): Promise<RteOutcome>;
  /** [Algorithm] start helper programs on one node; returns how many started (B.2.10) */
  startApplication?(argvs: string[][], node: BootNode): Promise<number>;

  /** [Rendezvous] open the endpoint new lamds call back to (B.2.12); returns where it listens */
  openSrvConnection(nodes: BootNode[]): Promise<{ host: string; port: number }>;
  /** [Rendezvous] wait for one of `nodes` to call back; fills its port and pid (B.2.14) */
  receiveLamdInfo(nodes: BootNode[]): Promise<BootNode>;
  /** [Rendezvous] (B.2.15) */
  closeSrvConnection(): Promise<void>;
  /** [Rendezvous] send the whole universe to `nodes[which]` (B.2.16) */
  sendUniverseInfo(nodes: BootNode[], which: number): Promise<void>;
}

/** What `init` returns to be considered (App. B.2.2). */
export interface BootInitResult {
  priority: number;
  actions: BootActions;
}

/** A boot module: an SSI module of type `boot` with init/finalize (App. B.2, Figure B.6). */
export interface BootModule extends SsiModule {
  type: 'boot';
  /** null (or a reason) when the module cannot boot here */
  init(
    where: BootLocation,
    ctx: BootContext,
  ): BootInitResult | null | string | Promise<BootInitResult | null | string>;
  finalize?(): void | Promise<void>;
}

/**
 * The boot type-API version this package implements. Core's `FRAMEWORKS` is the one source of
 * truth; a module declares its own literal (the version it was built for), never this constant.
 */
export const BOOT_TYPE_API: string = FRAMEWORKS.boot.api;
