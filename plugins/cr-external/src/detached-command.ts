import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** How a command run for one process ended. */
export interface CommandResult {
  command: string;
  /** The exit status (128 + n for a signal, as the shell reports it). */
  code: number;
  stderr: string;
  ms: number;
}

/**
 * The runner script: waits until it is no longer in the checkpointed process's tree (`setsid -f`
 * forks, and the fork's parent — a child of that process — exits at once; the wait ends when the
 * runner's parent is neither the process, `$4`, nor a child of it), then runs the command with
 * its stdout and stderr in files and writes the exit status last, atomically. A process-image
 * checkpointer dumps a process with all its descendants, so the one doing the dump must not be
 * one of them (CRIU refuses, or dumps itself).
 */
const RUNNER = `
echo $$ > "$3/pid"
while :; do
  pp=$(cut -d' ' -f4 /proc/$$/stat)
  [ "$pp" = "$4" ] || [ "$(cut -d' ' -f4 /proc/$pp/stat 2>/dev/null)" = "$4" ] || break
  sleep 0.01
done
sh -c "$1" > "$3/stdout" 2> "$3/stderr"
echo $? > "$3/status.tmp" && mv "$3/status.tmp" "$3/status"
`;

/**
 * Runs `command` with `sh -c` in a new session outside this process's tree and waits (polling
 * its status file, so this process's event loop stays free) up to `timeoutMs`; on time out the
 * command's process group is killed and the error says what was awaited.
 */
export async function runDetached(
  command: string,
  workDir: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<CommandResult> {
  const t0 = performance.now();
  await rm(join(workDir, 'status'), { force: true });
  const child = spawn(
    'setsid',
    ['-f', 'sh', '-c', RUNNER, 'ssi-cr-external', command, '', workDir, String(process.pid)],
    {
      stdio: 'ignore',
      env: { ...process.env, ...env },
    },
  );
  const started = new Promise<void>((resolve, reject) => {
    child.on('error', (err) =>
      reject(
        new Error(`cannot start setsid (util-linux) to run the checkpoint command: ${err.message}`),
      ),
    );
    child.on('exit', () => resolve());
  });
  await started;
  for (;;) {
    const status = await readFile(join(workDir, 'status'), 'utf8').catch(() => null);
    if (status !== null) {
      const stderr = await readFile(join(workDir, 'stderr'), 'utf8').catch(() => '');
      return { command, code: Number(status.trim()), stderr, ms: performance.now() - t0 };
    }
    if (performance.now() - t0 > timeoutMs) {
      await killGroup(workDir);
      throw new Error(
        `timed out after ${Math.round(timeoutMs / 1000)} s waiting for the command ${JSON.stringify(command)} to end (crmpi_external_timeout); it was killed`,
      );
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Kills the runner's process group (it leads its own session, so the group is its pid). */
async function killGroup(workDir: string): Promise<void> {
  const pid = Number((await readFile(join(workDir, 'pid'), 'utf8').catch(() => '')).trim());
  if (Number.isInteger(pid) && pid > 1) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}
