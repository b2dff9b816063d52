import { closeSync, openSync, readdirSync, readSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { H, HEADER_BYTES, MAGIC, P, STATE_READY } from './layout';
import { isProcessAlive } from './liveness';
import { sessionPrefix } from './names';
import { native } from './native';

/*
 * Clean-up, three layers:
 *  1. The creator unlinks the name on close(), and a process exit or SIGINT/SIGTERM/SIGHUP also
 *     unlinks every name this process created and has not unlinked yet (hooks below).
 *  2. By default the name is unlinked as soon as all N processes have attached (the mapping lives
 *     on until the last process unmaps it), so a job that dies after start-up leaves nothing.
 *  3. After a SIGKILL during start-up, cleanStaleSegments({ sessionDir }) (and the bin
 *     ssi-shm-clean, lamclean, wipe) remove what is left.
 */

const created = new Set<string>();
let hooked = false;
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function unlinkAllCreated(): void {
  for (const name of created) {
    try {
      native().unlink(name);
    } catch {
      // best effort at exit
    }
  }
  created.clear();
}

function onSignal(sig: NodeJS.Signals): void {
  unlinkAllCreated();
  // If we are the only listener, restore the default action and re-raise, so the process still
  // dies of the signal as it would have without us. Otherwise the other listeners decide.
  if (process.listenerCount(sig) === 1) {
    for (const s of SIGNALS) process.removeListener(s, onSignal);
    process.kill(process.pid, sig);
  }
}

/** Remember a name this process created, so exit and signals unlink it. */
export function registerCreated(name: string): void {
  created.add(name);
  if (!hooked) {
    hooked = true;
    process.on('exit', unlinkAllCreated);
    for (const s of SIGNALS) process.on(s, onSignal);
  }
}

export function forgetCreated(name: string): void {
  created.delete(name);
  if (created.size === 0 && hooked) {
    hooked = false;
    process.removeListener('exit', unlinkAllCreated);
    for (const s of SIGNALS) process.removeListener(s, onSignal);
  }
}

export interface CleanOptions {
  /** The session directory of the universe whose segments to remove (required). */
  sessionDir: string;
  /** Only this job's segments; default every job of the session. */
  job?: string;
  /** Whose segments; default the current user. */
  user?: string;
  /** Remove even segments that a live process is still attached to. Default false. */
  force?: boolean;
  /** Report what would be removed, remove nothing. Default false. */
  dryRun?: boolean;
  /** Where POSIX shared memory objects appear; default /dev/shm (Linux). */
  shmDir?: string;
}

export interface CleanResult {
  /** Names removed (or, with dryRun, that would be), without the leading "/". */
  removed: string[];
  /** Names left alone, and why (e.g. "in use by pid 1234"). */
  kept: { name: string; reason: string }[];
}

/** Segments younger than this whose header is not yet valid are left alone (being created). */
const INIT_GRACE_MS = 5_000;

/**
 * Find and remove the shared segments of a session (optionally of one job): those whose every
 * recorded process (creator and attached peers) is dead, or all of them with `force`. A segment
 * whose header is not valid yet is removed once its creator is dead, or when it is older than
 * 5 s and its creator is unknown. Never throws for one bad entry: it is reported in `kept`.
 *
 * Synchronous, so that it can run in exit paths.
 */
export function cleanStaleSegments(opts: CleanOptions): CleanResult {
  const dir = opts.shmDir ?? '/dev/shm';
  const prefix = sessionPrefix(opts);
  const result: CleanResult = { removed: [], kept: [] };
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return result;
  }
  for (const name of entries.sort()) {
    if (!name.startsWith(prefix)) continue;
    const path = join(dir, name);
    const reason = opts.force ? null : stillInUse(path);
    if (reason) {
      result.kept.push({ name, reason });
      continue;
    }
    if (!opts.dryRun) {
      try {
        unlinkSync(path);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT') {
          result.kept.push({ name, reason: `could not remove: ${code ?? String(err)}` });
          continue;
        }
      }
    }
    result.removed.push(name);
  }
  return result;
}

/** Why a segment must stay (a live process uses it), or null when it is stale. */
function stillInUse(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null; // gone or unreadable: removal decides
  }
  try {
    const head = Buffer.alloc(HEADER_BYTES);
    const got = readSync(fd, head, 0, HEADER_BYTES, 0);
    const word = (i: number) => (got >= (i + 1) * 4 ? head.readInt32LE(i * 4) : 0);
    const creator = word(H.creatorPid);
    if (word(H.magic) !== MAGIC || word(H.state) !== STATE_READY) {
      if (creator > 0) return isProcessAlive(creator) ? `being created by pid ${creator}` : null;
      const age = Date.now() - statSync(path).mtimeMs;
      return age < INIT_GRACE_MS ? 'being created (header not written yet)' : null;
    }
    const nprocs = word(H.nprocs);
    if (creator > 0 && isProcessAlive(creator)) return `in use by pid ${creator} (creator)`;
    // process lines: 2 x C after the header's 2 x C (the lock area), one line each
    const lines = Buffer.alloc(Math.min(nprocs, 1024) * 64);
    const n = readSync(fd, lines, 0, lines.length, HEADER_BYTES + 128);
    for (let i = 0; (i + 1) * 64 <= n; i++) {
      const pid = lines.readInt32LE(i * 64 + P.pid * 4);
      if (pid > 0 && isProcessAlive(pid)) return `in use by pid ${pid}`;
    }
    return null;
  } finally {
    closeSync(fd);
  }
}
