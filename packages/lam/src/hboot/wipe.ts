import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { killRecordedProcesses } from '../lamd/stale-session';
import { removeJobResources } from '../session/job-resources';
import { isProcessAlive } from '../session/proc-identity';
import { removeSessionDir, SESSION_FILES, sessionDirFor } from '../session/session-dir';
import { readSessionInfo } from '../session/session-info';

export interface WipeReport {
  sessionDir: string;
  /** 'stopped': it shut down on SIGTERM; 'killed': it needed SIGKILL */
  lamd: 'none' | 'stopped' | 'killed';
  /** processes of the lamd that were still running and got killed */
  processes: number;
  removed: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Takes down whatever a universe left on this node (LAM's `tkill`): its lamd (SIGTERM, then
 * SIGKILL), the processes the lamd recorded, and the session directory.
 */
export async function wipeSession(
  nodeName: string,
  suffix?: string,
  graceMs = 5000,
): Promise<WipeReport> {
  const sessionDir = sessionDirFor(nodeName, suffix);
  const report: WipeReport = { sessionDir, lamd: 'none', processes: 0, removed: false };
  if (!existsSync(sessionDir)) return report;
  const info = readSessionInfo(sessionDir);
  if (info && isProcessAlive(info.lamdPid, info.lamdStartTime)) {
    report.lamd = await stop(info.lamdPid, info.lamdStartTime, graceMs);
  }
  report.processes = killRecordedProcesses(join(sessionDir, SESSION_FILES.procs));
  removeJobResources({ sessionDir });
  removeSessionDir(sessionDir);
  report.removed = true;
  return report;
}

async function stop(pid: number, startTime: string | undefined, graceMs: number) {
  signal(pid, 'SIGTERM');
  for (const deadline = Date.now() + graceMs; Date.now() < deadline; ) {
    if (!isProcessAlive(pid, startTime)) return 'stopped' as const;
    await sleep(50);
  }
  signal(pid, 'SIGKILL');
  return 'killed' as const;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone meanwhile
  }
}
