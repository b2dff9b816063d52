import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `session.json`: who owns a session directory, readable without talking to the lamd. */
export interface SessionInfo {
  nodeName: string;
  suffix?: string;
  lamdPid: number;
  /** the lamd's start time (/proc stat field 22), so a recycled pid is never mistaken for it */
  lamdStartTime?: string;
  /** the boot module fixed this universe's nodes: why lamgrow and lamshrink refuse (LamdConfig.noResize) */
  noResize?: string;
}

export function writeSessionInfo(dir: string, info: SessionInfo): void {
  writeJsonAtomic(join(dir, 'session.json'), info);
}

export function readSessionInfo(dir: string): SessionInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(join(dir, 'session.json'), 'utf8')) as SessionInfo;
    return typeof info.nodeName === 'string' && Number.isInteger(info.lamdPid) ? info : undefined;
  } catch {
    return undefined;
  }
}

/** Readers never see a half-written file. */
export function writeJsonAtomic(file: string, value: unknown): void {
  writeFileSync(`${file}.tmp`, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}
