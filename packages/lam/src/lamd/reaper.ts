import { type ChildProcess, spawn } from 'node:child_process';

/**
 * A tiny shell that outlives the lamd only to clean up after it. It blocks reading a pipe whose
 * write end only the lamd holds; the kernel closes that end however the lamd dies (even by
 * SIGKILL), and the reaper then kills the process group of every process the lamd recorded as
 * running. On a clean shutdown the lamd has already stopped them all and removed the records,
 * so the reaper finds nothing to do.
 */
const SCRIPT = `
cat >/dev/null
found=
for f in "$1"/*; do
  [ -f "$f" ] || continue
  read pid _ <"$f" && kill -TERM -"$pid" 2>/dev/null && found=1
done
[ -n "$found" ] || exit 0
sleep 1
for f in "$1"/*; do
  [ -f "$f" ] || continue
  read pid _ <"$f" && kill -KILL -"$pid" 2>/dev/null
  rm -f "$f"
done
`;

export function startReaper(procsDir: string): ChildProcess {
  const child = spawn('/bin/sh', ['-c', SCRIPT, 'ssi-lamd-reaper', procsDir], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  child.on('error', () => {}); // no /bin/sh: the lamd still works, it just has no reaper
  // Neither the child nor its pipe may keep the lamd's event loop alive.
  child.unref();
  (child.stdin as unknown as { unref?: () => void })?.unref?.();
  return child;
}
