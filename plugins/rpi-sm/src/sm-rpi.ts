import type { Proc, RpiActions, RpiHost, RpiLimits, RpiRequest, UnexpectedMessage } from '@ssi/mpi';
import { ErrorClass, MpiError } from '@ssi/mpi';
import type { TcpTransport } from '@ssi/rpi-tcp';
import { ShmEndpoint } from '@ssi/shm';
import { openNodeSegment, sessionDirOf } from './node-segment';
import { SmPath } from './sm-path';
import { chooseWaitMode, type WaitChoice } from './wait-mode';

/** The version of tcp's transport surface this module was written against (same major needed). */
const TCP_TRANSPORT_MAJOR = '1.';

/**
 * Opens the sm rpi for `procs`: the job's ranks on this node through one shared segment (if
 * there is another one), everyone else through a tcp transport opened by name (`host.openModule`,
 * tcp's public surface), and routes every action by peer. A job whose ranks all share this node
 * opens no socket; a rank alone on its node opens no segment.
 */
export async function openSm(procs: Proc[], limits: RpiLimits, host: RpiHost): Promise<RpiActions> {
  const me = host.myProc;
  const local = procs
    .filter((p) => p.gps.node === me.gps.node)
    .sort((a, b) => a.gps.grank - b.gps.grank);
  const remote = procs.filter((p) => p.gps.node !== me.gps.node);
  const wait = chooseWaitMode(host.params, local.length);
  const rank = host.runtime.rank;
  host.verbose(
    10,
    `sm: rank ${rank}: ${local.length} ranks on this node, ${remote.length} elsewhere; wait ${wait.mode} ` +
      `(spin ${wait.spinUs} µs): ${wait.reason}`,
  );
  const opened = local.length > 1 ? await openSmPath(host, local, wait) : null;
  let tcp: TcpTransport | null = null;
  if (remote.length > 0) {
    const module = await host.openModule('tcp');
    tcp = (await module.init([me, ...remote], limits, host)) as TcpTransport;
    if (typeof tcp.transportApi !== 'string' || !tcp.transportApi.startsWith(TCP_TRANSPORT_MAJOR)) {
      throw new MpiError(
        ErrorClass.ERR_OTHER,
        `rpi sm: the tcp module offers transport API ${String(tcp.transportApi)}, sm needs ${TCP_TRANSPORT_MAJOR}x`,
      );
    }
  }
  opened?.path.startReceiving(opened.ep, wait.spinUs, opened.memory);
  return routeByPeer(host, opened, tcp, wait);
}

interface OpenPath {
  path: SmPath;
  ep: ShmEndpoint;
  /** The segment's memory (the postboxes are views of it). */
  memory: ArrayBufferLike;
  closeSegment: () => void;
}

async function openSmPath(host: RpiHost, local: Proc[], wait: WaitChoice): Promise<OpenPath> {
  const p = host.params;
  const { singleCopy, splitMin } = copyParams(host); // before the segment: nothing to undo
  const seg = await openNodeSegment({
    sessionDir: sessionDirOf(),
    job: host.runtime.jobId,
    node: host.myProc.gps.node,
    index: local.indexOf(host.myProc),
    nprocs: local.length,
    shortLimit: Number(p.get('rpi_sm_short')),
    poolSize: Number(p.get('rpi_sm_pool')),
    lock: wait.lock,
    attachTimeoutMs: Number(p.get('rpi_sm_attach_timeout')),
  });
  const path = new SmPath(host, local, seg.layout.shortLimit, singleCopy, splitMin);
  const off = path.singleCopyOff;
  host.verbose(
    10,
    `sm: rank ${host.runtime.rank}: long messages ${off === null ? 'in a single copy (process_vm_readv/writev)' : `through the pool: ${off}`}`,
  );
  const ep = new ShmEndpoint(seg, {
    // The MPI call that waits spins (`advance`); the endpoint's own loop only sleeps.
    spinUs: 0,
    helperSpinUs: wait.helperSpinUs,
    intoFor: path.intoFor,
  });
  host.verbose(
    10,
    `sm: rank ${host.runtime.rank}: segment ${seg.name}, slot ${seg.index} of ${local.length}`,
  );
  return { path, ep, memory: seg.buffer, closeSegment: () => seg.close() };
}

/** `rpi_sm_single_copy` (0 or 1) and `rpi_sm_split` (bytes >= 0), checked. */
function copyParams(host: RpiHost): { singleCopy: boolean; splitMin: number } {
  const single = Number(host.params.get('rpi_sm_single_copy'));
  if (single !== 0 && single !== 1) {
    throw new MpiError(ErrorClass.ERR_ARG, `rpi_sm_single_copy must be 0 or 1, got ${single}`);
  }
  const split = Number(host.params.get('rpi_sm_split'));
  if (!Number.isInteger(split) || split < 0) {
    throw new MpiError(
      ErrorClass.ERR_ARG,
      `rpi_sm_split must be a whole number of bytes >= 0 (0: never split), got ${split}`,
    );
  }
  return { singleCopy: single === 1, splitMin: split };
}

/** The rpi actions: each goes to the path that has the peer (sm on-node, tcp off-node). */
function routeByPeer(
  host: RpiHost,
  opened: OpenPath | null,
  tcp: TcpTransport | null,
  wait: WaitChoice,
): RpiActions {
  const me = host.myProc;
  const sm = opened?.path ?? null;
  const onNode = (proc: Proc | null): boolean => proc !== null && sm?.has(proc) === true;
  const offNode = (proc: Proc | null): boolean => proc !== null && proc !== me && !onNode(proc);
  return {
    addprocs: async () => {
      throw new MpiError(
        ErrorClass.ERR_OTHER,
        'rpi sm: adding processes after MPI.init is not supported',
      );
    },
    async finalize(proc?: Proc) {
      if (proc) {
        if (offNode(proc)) await tcp?.finalize(proc);
        return;
      }
      host.verbose(
        10,
        `sm: rank ${host.runtime.rank} ${sm ? sm.describeStats() : 'used no shared memory'}`,
      );
      await Promise.all([opened?.path.finalize(opened.closeSegment), tcp?.finalize()]);
    },
    build: (req: RpiRequest) => {
      req.rpi = 0;
    },
    start: (req: RpiRequest) => (onNode(req.proc) ? sm!.start(req) : tcp!.start(req)),
    matched: (req: RpiRequest, msg: UnexpectedMessage) =>
      onNode(msg.proc) ? sm!.matched(req, msg) : tcp!.matched(req, msg),
    posted: (req: RpiRequest) => {
      if (offNode(req.proc)) tcp!.posted?.(req);
    },
    unposted: (req: RpiRequest) => {
      if (offNode(req.proc)) tcp!.unposted?.(req);
    },
    destroy: (req: RpiRequest) => {
      if (onNode(req.proc)) sm!.destroy(req);
      else if (offNode(req.proc)) tcp!.destroy(req);
      else {
        sm?.destroy(req);
        tcp?.destroy(req);
      }
    },
    cancel: (req: RpiRequest) => (onNode(req.proc) ? sm!.cancel(req) : tcp!.cancel(req)),
    // the fast paths look the peer up once (sm's table), not through onNode first
    fastsend: (req: RpiRequest) => sm?.fastsend(req) ?? tcp?.fastsend?.(req) ?? false,
    fastrecv: sm === null ? undefined : (req: RpiRequest) => sm.fastrecv(req),
    // Shared memory is polled synchronously by waiting MPI calls (spin up to rpi_sm_spin_us);
    // in spin mode the MPI layer keeps polling while requests are active, otherwise the
    // endpoint's loop sleeps and wakes us. Without an on-node peer everything is tcp's events.
    polling: sm !== null,
    pollWait: wait.mode === 'spin' ? 'spin' : 'event',
    advance: (spin: boolean) => sm?.advance(spin) ?? false,
  };
}
