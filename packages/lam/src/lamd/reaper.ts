import { type ChildProcess, spawn } from 'node:child_process';

/**
 * A tiny shell that outlives the lamd only to clean up after it. It blocks reading a pipe whose
 * write end only the lamd holds; the kernel closes that end however the lamd dies (even by
 * SIGKILL), and the reaper then kills the process group of every process the lamd recorded as
 * running. On a clean shutdown the lamd has already stopped them all and removed the records,
 * so the reaper finds nothing to do.
 *
 * A lamd inside another process (mpirun's private universe) also has its leftovers removed: the
 * session directory and the job resources (`$3`: `<dir>/<prefix>`, globbed), since no later lamd
 * will ever claim a session named after a dead mpirun. Both are gone after a clean shutdown.
 */
const SCRIPT = `
cat >/dev/null
found=
for f in "$1"/*; do
  [ -f "$f" ] || continue
  read pid _ <"$f" && kill -TERM -"$pid" 2>/dev/null && found=1
done
if [ -n "$found" ]; then
  sleep 1
  for f in "$1"/*; do
    [ -f "$f" ] || continue
    read pid _ <"$f" && kill -KILL -"$pid" 2>/dev/null
    rm -f "$f"
  done
fi
[ -n "$2" ] || exit 0
rm -f "$3"* 2>/dev/null
[ -d "$2" ] && rm -rf "$2"
exit 0
`;

/** What a reaper of an in-process lamd removes besides the processes. */
export interface ReaperLeftovers {
  sessionDir: string;
  /** `<dir>/<prefix>` of the session's job resources (see session/job-resources.ts) */
  resourcePrefix: string;
}

export function startReaper(procsDir: string, leftovers?: ReaperLeftovers): ChildProcess {
  const args = [procsDir, leftovers?.sessionDir ?? '', leftovers?.resourcePrefix ?? ''];
  const child = spawn('/bin/sh', ['-c', SCRIPT, 'ssi-lamd-reaper', ...args], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  child.on('error', () => {}); // no /bin/sh: the lamd still works, it just has no reaper
  // Neither the child nor its pipe may keep the lamd's event loop alive.
  child.unref();
  (child.stdin as unknown as { unref?: () => void })?.unref?.();
  return child;
}
