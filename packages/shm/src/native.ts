import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ShmError } from './errors';

/** The mapping as JavaScript sees it: `buffer` covers the whole segment. */
export interface NativeHandle {
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
  readonly size: number;
}

export type BufferKind = 'ab' | 'sab';
export type WaitResult = 'ok' | 'not-equal' | 'timed-out' | 'cancelled';

export interface NativeWaiter {
  wait(
    handle: NativeHandle,
    byteOffset: number,
    expected: number,
    timeoutMs: number,
    spinNs: number,
  ): Promise<WaitResult>;
  close(): void;
}

export interface NativeAddon {
  create(name: string, size: number, kind: BufferKind, populate: boolean): NativeHandle;
  open(name: string, kind: BufferKind, populate: boolean): NativeHandle;
  close(handle: NativeHandle): void;
  unlink(name: string): boolean;
  wake(handle: NativeHandle, byteOffset: number, count: number): number;
  waitSync(
    handle: NativeHandle,
    byteOffset: number,
    expected: number,
    timeoutMs: number,
    spinNs: number,
  ): WaitResult;
  info(): { cacheLine: number; pageSize: number };
  Waiter: new () => NativeWaiter;
}

let addon: NativeAddon | undefined;

/** The package root: dist/ (built) and src/ (tests) both sit one level below it. */
function packageRoot(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..');
}

/** Load build/Release/ssi_shm.node once; a clear error when the install step did not build it. */
export function native(): NativeAddon {
  if (addon) return addon;
  const file = join(packageRoot(), 'build', 'Release', 'ssi_shm.node');
  if (!existsSync(file)) {
    throw new ShmError(
      'NATIVE_UNAVAILABLE',
      `the @ssi/shm native addon is not built (expected ${file}). ` +
        'It is compiled from source when the package is installed; it needs g++, make and python3. ' +
        `Run "node scripts/build-native.mjs" in ${packageRoot()} and read its output.`,
    );
  }
  const require = createRequire(import.meta.url);
  addon = require(file) as NativeAddon;
  return addon;
}

/** Map an errno-coded error of the addon to a ShmError (or rethrow anything else). */
export function systemError(err: unknown, what: string): ShmError {
  const e = err as { code?: string; message?: string };
  if (e?.code === 'ENOENT') return new ShmError('NOT_FOUND', `${what}: no such segment`);
  if (e?.code === 'EEXIST') return new ShmError('EXISTS', `${what}: the name is already taken`);
  return new ShmError('SYSTEM', `${what}: ${e?.message ?? String(err)}`);
}
