import type { RpiHost } from '@ssi/mpi';
import { Proc } from '@ssi/mpi';

/** The job secret of every fake job. */
export const SECRET = Buffer.from('0123456789abcdef0123456789abcdef');

/**
 * The processes of one job played by hosts in this one test process, for the rpi template's unit
 * tests: the allgather completes when every host has called it, `onAllgather(rank, value)` sees
 * each published value, and `failures` records every `peerFailed` (host rank, peer, reason).
 */
export function job(n: number, onAllgather: (rank: number, value: unknown) => void = () => {}) {
  const procs = Array.from(
    { length: n },
    (_, i) => new Proc({ node: 0, pid: 1000 + i, index: i, grank: i }, '127.0.0.1', 'here', i),
  );
  const values: unknown[] = [];
  const failures: [number, number, string][] = [];
  const waiting: ((all: unknown[]) => void)[] = [];
  const hosts = procs.map(
    (me, rank) =>
      ({
        myProc: me,
        procs,
        runtime: {
          jobId: 'job-1',
          secret: SECRET,
          allgather: (value: unknown) =>
            new Promise((resolve) => {
              values[rank] = value;
              onAllgather(rank, value);
              waiting.push(resolve);
              if (waiting.length === n) for (const w of waiting) w(values.slice());
            }),
        },
        verbose: () => {},
        peerFailed: (proc: Proc, reason: string) => failures.push([rank, proc.gps.grank, reason]),
      }) as unknown as RpiHost,
  );
  return { procs, hosts, failures };
}
