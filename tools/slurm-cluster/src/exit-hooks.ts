/**
 * Clusters owned by this process are stopped when it goes: on 'exit' (normal end, process.exit,
 * uncaught exception) and on SIGINT / SIGTERM / SIGHUP. Only synchronous work can run there, so
 * each cluster provides a synchronous stop. SIGKILL cannot be caught: `killStraySlurmClusters()`.
 */
const owned = new Set<{ stopSync(): void }>();
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
let installed = false;

function stopAll(): void {
  for (const c of [...owned]) {
    try {
      c.stopSync();
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

export function own(c: { stopSync(): void }): void {
  owned.add(c);
  install();
}

export function disown(c: { stopSync(): void }): void {
  owned.delete(c);
  if (owned.size === 0) uninstall();
}
