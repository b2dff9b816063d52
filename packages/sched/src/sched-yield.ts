import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The compiled addon (native/sched.cc). */
interface SchedAddon {
  schedYield(): void;
}

/** Whether `schedYield` works here, and if not, why (and what to do). */
export type SchedState = { ok: true } | { ok: false; reason: string };

let addon: SchedAddon | null = null;
let state: SchedState | undefined;

/** build/Release/ssi_sched.node of this package (dist/ and src/ both sit one level below it). */
export function addonFile(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', 'build', 'Release', 'ssi_sched.node');
}

/**
 * Loads the addon at `file` once (on first use, never when the module loads: a start-up snapshot
 * holds this package's code but cannot hold a native addon). Optional: a missing or unloadable
 * one is a state that says why, not an error.
 */
export function schedAvailable(file: string = addonFile()): SchedState {
  if (state) return state;
  if (!existsSync(file)) {
    state = {
      ok: false,
      reason:
        `the @ssi/sched native addon is not built (expected ${file}); it is compiled when the ` +
        `package is installed and needs g++, make and python3: run "node scripts/build-native.mjs" ` +
        `in ${join(dirname(file), '..', '..')} and read its output`,
    };
    return state;
  }
  try {
    addon = createRequire(import.meta.url)(file) as SchedAddon;
    state = { ok: true };
  } catch (err) {
    state = { ok: false, reason: `cannot load ${file}: ${(err as Error).message}` };
  }
  return state;
}

/**
 * Gives the CPU to another runnable process on it (`sched_yield(2)`), if there is one; returns at
 * once otherwise. For a process that polls while others share its CPU (an oversubscribed MPI
 * job): Node's event loop kept busy holds the CPU until the time slice ends. Throws the reason
 * when the addon is not available (`schedAvailable`).
 */
export function schedYield(): void {
  if (addon === null) {
    const s = schedAvailable();
    if (!s.ok) throw new Error(s.reason);
  }
  addon!.schedYield();
}

/** Forgets the loaded state (tests that load from another file). */
export function resetSchedForTests(): void {
  addon = null;
  state = undefined;
}
