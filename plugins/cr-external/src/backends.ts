import { spawnSync } from 'node:child_process';

/** The back ends of the external module (`crmpi_external_backend`). */
export const BACKENDS = ['generic', 'criu', 'hooks'] as const;
export type BackendName = (typeof BACKENDS)[number];

/** The commands a command-running back end uses for one process (templates with placeholders). */
export interface BackendCommands {
  checkpoint: string;
  restart: string;
}

/** The file a restore writes into the image directory before the process runs again. */
export const RESTORED_MARKER = 'ssi-restored';

/**
 * CRIU's commands for a Node rank. `--leave-running`: the job goes on after the dump.
 * `--tcp-established`: the rank's connections to its peers are open (drained, not closed) and
 * are saved and restored in repair mode. `--shell-job`: the rank shares a session with the lamd
 * that started it. `--ext-unix-sk`: its Unix socket to the lamd has its other end outside the
 * tree. `--file-locks`: Node and libuv may hold locks. `--manage-cgroups=ignore`: the restored
 * process joins the restorer's cgroups. The restore is detached (`-d`) and first marks the image
 * restored, which the restored process reads when it resumes.
 */
export function criuCommands(criu: string, extra: string): BackendCommands {
  const common = `--tcp-established --shell-job --ext-unix-sk --file-locks --manage-cgroups=ignore${extra ? ` ${extra}` : ''}`;
  return {
    checkpoint: `${criu} dump -t {pid} -D {image} --leave-running ${common} -o dump.log -v2`,
    restart: `touch {image}/${RESTORED_MARKER} && ${criu} restore -D {image} -d ${common} -o restore.log -v2`,
  };
}

/** Whether CRIU can run on this machine: null, or why not (`criu check`'s own words). */
export function criuUnavailable(criu = 'criu'): string | null {
  const r = spawnSync(criu, ['check'], { encoding: 'utf8', timeout: 30_000 });
  if (r.error)
    return `${criu} cannot be run: ${r.error.message} (install it: apt-get install criu)`;
  if (r.status === 0) return null;
  const why = `${r.stderr}${r.stdout}`.trim().split('\n').slice(-3).join(' / ');
  return `\`${criu} check\` failed (exit ${r.status}): ${why || 'no output'}`;
}
