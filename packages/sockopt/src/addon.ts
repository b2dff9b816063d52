import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The compiled addon (native/sockopt.cc). */
export interface SockoptAddon {
  setBufferSizes(fd: number, sndbuf: number, rcvbuf: number): { sndbuf: number; rcvbuf: number };
  getBufferSizes(fd: number): { sndbuf: number; rcvbuf: number };
}

/** The addon, or why there is none. */
export type AddonState = { ok: true; addon: SockoptAddon } | { ok: false; reason: string };

let state: AddonState | undefined;

/** The package root: dist/ (built) and src/ (tests) both sit one level below it. */
function packageRoot(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..');
}

/** Loads build/Release/ssi_sockopt.node once; it is optional, so a missing one is a state. */
export function loadAddon(): AddonState {
  if (state) return state;
  const file = join(packageRoot(), 'build', 'Release', 'ssi_sockopt.node');
  if (!existsSync(file)) {
    state = {
      ok: false,
      reason:
        `the @ssi/sockopt native addon is not built (expected ${file}); it is compiled when the ` +
        `package is installed and needs g++, make and python3: run "node scripts/build-native.mjs" ` +
        `in ${packageRoot()} and read its output`,
    };
    return state;
  }
  try {
    state = { ok: true, addon: createRequire(import.meta.url)(file) as SockoptAddon };
  } catch (err) {
    state = { ok: false, reason: `cannot load ${file}: ${(err as Error).message}` };
  }
  return state;
}
