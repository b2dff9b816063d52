/**
 * Fixtures owned by this process (testbeds here, Slurm clusters in @ssi/slurm-cluster) are
 * stopped when it goes: on 'exit' (normal end, process.exit, uncaught exception) and on SIGINT /
 * SIGTERM / SIGHUP. Only synchronous work can run there, so each registered fixture provides a
 * synchronous stop. SIGKILL cannot be caught: for that, each fixture's stray sweep
 * (`killStrayTestbeds()` / `ssi-testbed clean`, `killStraySlurmClusters()`).
 */
const owned = new Set<{ stopSync(): void }>();
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
let installed = false;

function stopAll(): void {
  for (const fixture of [...owned]) {
    try {
      fixture.stopSync();
    } catch {
      // keep going: the others must be stopped too
    }
  }
  owned.clear();
}

function onExit(): void {
  stopAll();
}

function onSignal(sig: NodeJS.Signals): void {
  stopAll();
  uninstall();
  // If nobody else listens, behave as if we had not been here: die by the signal.
  if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', onExit);
  for (const s of SIGNALS) process.on(s, onSignal);
}

function uninstall(): void {
  if (!installed) return;
  installed = false;
  process.off('exit', onExit);
  for (const s of SIGNALS) process.off(s, onSignal);
}

/** Stops `fixture` (synchronously) if this process ends before `disown` is called. */
export function own(fixture: { stopSync(): void }): void {
  owned.add(fixture);
  install();
}

/** `fixture` was stopped the normal way: nothing to do at exit any more. */
export function disown(fixture: { stopSync(): void }): void {
  owned.delete(fixture);
  if (owned.size === 0) uninstall();
}
