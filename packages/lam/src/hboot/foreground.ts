import { spawn } from 'node:child_process';
import { lamBin } from '../package-paths';
import type { HbootConfig } from './hboot-config';

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/**
 * Runs a boot configuration on this node as the task a batch system started (PBS's tm_spawn,
 * Slurm's srun), staying the parent of what it starts until that ends, so that the batch system,
 * which tracks its task, tracks the lamd too: a lamd runs in the foreground (not through hboot,
 * which would detach it from the task); recon and wipe run hboot. SIGTERM, SIGINT and SIGHUP are
 * passed on (a MOM or slurmstepd usually signals the whole process group, the lamd included;
 * passing them on covers launchers that signal only their task). Resolves with the exit status
 * to use (128 + signal when a signal ended the child).
 */
export function runHbootInForeground(config: HbootConfig, who: string): Promise<number> {
  const lamd = config.mode === 'lamd';
  const child = spawn(process.execPath, [lamBin(lamd ? 'lamd' : 'hboot')], {
    stdio: ['pipe', 'inherit', 'inherit'],
  });
  child.stdin!.on('error', () => {});
  child.stdin!.end(`${JSON.stringify(lamd ? config.lamd : config)}\n`);
  const forward = (sig: NodeJS.Signals) => () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
  };
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, forward(sig));
  return new Promise((resolve) => {
    child.once('error', (err) => {
      process.stderr.write(`${who}: cannot start ${lamd ? 'the lamd' : 'hboot'}: ${err.message}\n`);
      resolve(1);
    });
    child.once('exit', (code, signal) => {
      resolve(code ?? 128 + (SIGNAL_NUMBERS[signal ?? ''] ?? 1));
    });
  });
}
