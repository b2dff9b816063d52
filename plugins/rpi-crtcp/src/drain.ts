import type { Proc, RpiRuntime } from '@ssi/mpi';
import { ErrorClass, MpiError, OobTag, withDeadline } from '@ssi/mpi';
import type { TcpTransport } from '@ssi/rpi-tcp';
import type { DrainReport, PeerDrain } from './drain-report';

/** What had been read from each peer when the job was interrupted (to tell what the drain read). */
export type ReadMark = Map<Proc, { bytes: number; messages: number }>;

export function markReads(tcp: TcpTransport): ReadMark {
  const mark: ReadMark = new Map();
  for (const p of tcp.peers) {
    const t = tcp.traffic(p);
    mark.set(p, { bytes: t.received, messages: t.messagesReceived });
  }
  return mark;
}

/**
 * The drain of Fig. 7.8. The transport holds its writes (since `interrupt`) and the entry gate
 * is closed, so no byte count of this process moves any more: (1) each process tells every peer
 * out of band how many bytes it wrote to it, (2) flushes every byte handed to a socket to the
 * kernel, and (3) reads each channel until it has read exactly that many. Reading hands every
 * message to the MPI layer as usual (matched or queued). (4) Each then tells every peer how many
 * bytes it read from it and checks the peer's answer against what it wrote: when `drain`
 * returns, this process's incoming and outgoing channels are all empty, and a peer cannot have
 * gone on (continue) before this process finished reading from it.
 */
export async function drain(
  tcp: TcpTransport,
  runtime: RpiRuntime,
  mark: ReadMark,
  timeoutMs: number,
): Promise<DrainReport> {
  const started = performance.now();
  const peers = tcp.peers;
  const sent = peers.map((p) => tcp.traffic(p).sent);
  // All at once: each send waits for the lamd's acceptance, and one after another they cost
  // np-1 round trips to the lamd per rank (most of the drain's time at 8 ranks on 2 CPUs).
  await Promise.all(peers.map((p, i) => runtime.oobSend(p.gps.grank, OobTag.RPI_CR, sent[i])));
  await tcp.whenFlushed(timeoutMs);
  const theirs = await Promise.all(
    peers.map(async (p) => {
      const count = await countFrom(runtime, p, 'its byte count', timeoutMs);
      await tcp.whenReceived(p, count, timeoutMs);
      return count;
    }),
  );
  const received = peers.map((p) => tcp.traffic(p).received);
  await Promise.all(peers.map((p, i) => runtime.oobSend(p.gps.grank, OobTag.RPI_CR, received[i])));
  for (const [i, p] of peers.entries()) {
    const got = await countFrom(runtime, p, 'how many bytes it read', timeoutMs);
    if (got !== sent[i]) {
      throw new MpiError(
        ErrorClass.ERR_OTHER,
        `rpi crtcp: checkpoint: ${p.describe()} read ${got} of the ${sent[i]} bytes this ` +
          'process wrote to it: the channel was not drained',
      );
    }
  }
  return report(
    tcp,
    runtime.rank,
    peers,
    { sent, theirs, received },
    mark,
    performance.now() - started,
  );
}

/** The next count from `p` on the drain's out-of-band tag, checked and bounded in time. */
async function countFrom(
  runtime: RpiRuntime,
  p: Proc,
  what: string,
  timeoutMs: number,
): Promise<number> {
  const n = await withDeadline(
    runtime.oobRecv<number>(p.gps.grank, OobTag.RPI_CR),
    timeoutMs,
    () =>
      new MpiError(
        ErrorClass.ERR_OTHER,
        `rpi crtcp: checkpoint: ${p.describe()} did not send ${what} within ${timeoutMs} ms ` +
          '(rpi_crtcp_drain_timeout); is every rank taking part in the checkpoint?',
      ),
  );
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new MpiError(
      ErrorClass.ERR_OTHER,
      `rpi crtcp: checkpoint: ${p.describe()} sent ${JSON.stringify(n)} as ${what}; expected a non-negative integer`,
    );
  }
  return n;
}

function report(
  tcp: TcpTransport,
  rank: number,
  peers: readonly Proc[],
  counts: { sent: number[]; theirs: number[]; received: number[] },
  mark: ReadMark,
  ms: number,
): DrainReport {
  const rows: PeerDrain[] = peers.map((p, i) => {
    const t = tcp.traffic(p);
    const before = mark.get(p) ?? { bytes: 0, messages: 0 };
    const received = counts.received[i]!;
    return {
      peer: p.gps.grank,
      sent: counts.sent[i]!,
      theirSent: counts.theirs[i]!,
      received,
      drainedBytes: received - before.bytes,
      drainedMessages: (t.messagesReceived - before.messages) >>> 0,
      queued: t.queued,
      held: t.held,
    };
  });
  return {
    rank,
    bytes: rows.reduce((s, r) => s + r.drainedBytes, 0),
    messages: rows.reduce((s, r) => s + r.drainedMessages, 0),
    ms,
    peers: rows,
  };
}
