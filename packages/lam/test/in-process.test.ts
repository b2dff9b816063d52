import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isProcessAlive, JOB_RESOURCE_DIR, jobResourcePrefix } from '../src/index';
import { SUFFIX } from './helpers';

/**
 * bootInProcess for real: a child process boots a one-node universe whose lamd runs inside it,
 * starts a process through that lamd and is then killed with SIGKILL. The lamd's reaper must stop
 * the started process and remove the session directory and the session's job resources (a file
 * named with its prefix in /dev/shm stands for a shared-memory segment).
 */
const dist = (pkg: string) =>
  pathToFileURL(resolve(import.meta.dirname, '..', '..', pkg, 'dist', 'index.js')).href;
const work = mkdtempSync(join(tmpdir(), 'ssi-lam-inprocess-'));
const live = new Set<ChildProcess>();
const strays: number[] = [];

const BOOTER = `
import { defineModule, discoverModules, ParamRegistry } from ${JSON.stringify(dist('core'))};
import { baseBootActions, bootInProcess, LamClient } from ${JSON.stringify(dist('lam'))};
const env = { ...process.env };
const params = new ParamRegistry({ env });
const local = defineModule({
  ssiApi: '1.0.0', type: 'boot', typeApi: '1.1.0', name: 'local', version: '1.0.0',
  init: (_where, ctx) => ({
    priority: 50,
    actions: baseBootActions({ ctx, startRteProc: () => { throw new Error('in process: no launch'); } }),
  }),
});
const universe = await bootInProcess({ ssi: { params, discovery: discoverModules({ staticModules: [local] }) }, env, warn: () => {} });
if (!universe) throw new Error('bootInProcess declined a one-node universe');
const client = await LamClient.connect({ env, params, name: 'test' });
const sleeper = await client.spawn(0, { argv: ['sleep', '60'] });
console.log(JSON.stringify({ sessionDir: universe.sessionDir, sleeper: sleeper.pid }));
`;

function startBooter(suffix: string): ChildProcess {
  const file = join(work, 'booter.mjs');
  writeFileSync(file, BOOTER);
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, LAM_MPI_SESSION_SUFFIX: suffix, LAM_MPI_SESSION_HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  return child;
}

function firstLine(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((ok, fail) => {
    let out = '';
    let err = '';
    const timer = setTimeout(
      () => fail(new Error(`no line from the booter in ${timeoutMs} ms: ${err}`)),
      timeoutMs,
    );
    child.stderr?.on('data', (d) => (err += d));
    child.stdout?.on('data', (d) => {
      out += d;
      if (out.includes('\n')) {
        clearTimeout(timer);
        ok(out.split('\n')[0]!);
      }
    });
    child.once('exit', (code) => fail(new Error(`the booter exited (${code}) first: ${err}`)));
  });
}

async function waitFor(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

afterEach(() => {
  for (const c of live) c.kill('SIGKILL');
  live.clear();
  for (const pid of strays.splice(0)) if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('bootInProcess: a lamd inside the booting process', () => {
  it('killed with its process, its reaper stops what it started and removes the session and job resources', async () => {
    const child = startBooter(`${SUFFIX}-inproc`);
    const { sessionDir, sleeper } = JSON.parse(await firstLine(child, 30_000));
    strays.push(sleeper);
    expect(existsSync(sessionDir)).toBe(true);
    expect(isProcessAlive(sleeper)).toBe(true);
    const segment = join(JOB_RESOURCE_DIR, `${jobResourcePrefix({ sessionDir })}job-seg`);
    writeFileSync(segment, '');
    child.kill('SIGKILL');
    await waitFor('the started process to be stopped', () => !isProcessAlive(sleeper), 15_000);
    await waitFor('the session directory to go', () => !existsSync(sessionDir), 15_000);
    await waitFor('the job resource to go', () => !existsSync(segment), 5_000).finally(() =>
      rmSync(segment, { force: true }),
    );
  });
});
