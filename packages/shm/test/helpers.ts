import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sessionPrefix } from '../src/index';

const here = dirname(fileURLToPath(import.meta.url));
export const FIXTURES = join(here, 'fixtures');

export interface Peer {
  child: ChildProcess;
  out: string[];
  err: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProcess>();

/** Run a fixture (TypeScript, through tsx) with one JSON argument. Tracked for killAll(). */
export function startFixture(name: string, arg: unknown): Peer {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(FIXTURES, `${name}.ts`), JSON.stringify(arg)],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: join(here, '..') },
  );
  children.add(child);
  const out: string[] = [];
  const err: string[] = [];
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    partial += d;
    const lines = partial.split('\n');
    partial = lines.pop()!;
    out.push(...lines);
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => err.push(d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    child.on('exit', (code, signal) => {
      children.delete(child);
      if (partial) out.push(partial);
      res({ code, signal });
    });
  });
  return { child, out, err, exited };
}

/** Wait for a stdout line starting with `prefix`; fail loudly (with the child's stderr) on timeout. */
export async function waitLine(
  p: Peer,
  prefix: string,
  timeoutMs: number,
  what: string,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = p.out.find((l) => l.startsWith(prefix));
    if (line !== undefined) return line.slice(prefix.length).trim();
    if (p.child.exitCode !== null || p.child.signalCode !== null) {
      throw new Error(
        `${what}: the process exited (${p.child.exitCode ?? p.child.signalCode}) before printing "${prefix}"\nstdout: ${p.out.join('\n')}\nstderr: ${p.err.join('')}`,
      );
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${what}: no "${prefix}" line within ${timeoutMs} ms\nstdout: ${p.out.join('\n')}\nstderr: ${p.err.join('')}`,
      );
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Wait for a child to exit; fail loudly on timeout. */
export async function waitExit(p: Peer, timeoutMs: number, what: string) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, rej) => {
    timer = setTimeout(
      () =>
        rej(
          new Error(
            `${what}: still running after ${timeoutMs} ms\nstdout: ${p.out.join('\n')}\nstderr: ${p.err.join('')}`,
          ),
        ),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([p.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** SIGKILL every fixture still running (afterEach). */
export async function killAll(): Promise<void> {
  const waits: Promise<unknown>[] = [];
  for (const c of children) {
    waits.push(new Promise((r) => c.once('exit', r)));
    c.kill('SIGKILL');
  }
  await Promise.all(waits);
  children.clear();
}

/** The session directories this test process made up: only their segments are ours. */
const sessions: string[] = [];

/**
 * Our segments in /dev/shm: those of the sessions `testSession()` made. Other jobs on the
 * machine (other users, other test runs) create and remove theirs at any time.
 */
export function shmListing(): string[] {
  const prefixes = sessions.map((sessionDir) => sessionPrefix({ sessionDir }));
  try {
    return readdirSync('/dev/shm')
      .filter((n) => prefixes.some((p) => n.startsWith(p)))
      .sort();
  } catch {
    return [];
  }
}

let counter = 0;
/** A session directory unique to this test run (only its hash is used). */
export function testSession(): string {
  counter++;
  const dir = `/tmp/ssi-shm-test-${process.pid}-${Date.now()}-${counter}`;
  sessions.push(dir);
  return dir;
}
