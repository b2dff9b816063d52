import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { alive, killUntilGone, markedProcesses } from './procs';

export interface KillStrayReport {
  /** cluster directories whose processes were killed */
  dirs: string[];
  /** how many processes were killed */
  killed: number;
}

function ownerAlive(dir: string): boolean {
  try {
    const info = JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as {
      owner?: { pid?: number };
    };
    return typeof info.owner?.pid === 'number' && alive(info.owner.pid);
  } catch {
    return false;
  }
}

/**
 * Kill the daemons and job processes of private clusters whose owning process is gone (a test run
 * that was SIGKILLed), or of every cluster with `all`, and remove their directories.
 */
export async function killStraySlurmClusters(
  opts: { all?: boolean } = {},
): Promise<KillStrayReport> {
  const byDir = new Map<string, number[]>();
  for (const p of markedProcesses()) {
    if (!opts.all && ownerAlive(p.dir)) continue;
    byDir.set(p.dir, [...(byDir.get(p.dir) ?? []), p.pid]);
  }
  const pids = [...byDir.values()].flat();
  await killUntilGone(
    () => markedProcesses().flatMap((p) => (byDir.has(p.dir) ? [p.pid] : [])),
    5000,
  );
  for (const dir of byDir.keys()) rmSync(dir, { recursive: true, force: true });
  return { dirs: [...byDir.keys()], killed: pids.length };
}
