import { closeSync, constants, openSync, writeSync } from 'node:fs';

/**
 * Points a restored process's output at the new job. Its own stdout and stderr are the ones it
 * was saved with: sockets to the lamd of the old job, which is gone. The restore runner holds a
 * FIFO open for each and forwards what comes out of it as the rank's output in the new job. (A
 * process-image checkpointer may restore the descriptors onto the runner's instead, as CRIU's
 * `--inherit-fd` can; this works whatever it did.) Writes are synchronous, so nothing written
 * before an exit is lost. False when the runner is not there (no reader on the FIFOs).
 */
export function redirectOutput(paths: { stdout: string; stderr: string }): boolean {
  const fds: number[] = [];
  try {
    for (const path of [paths.stdout, paths.stderr]) {
      // Non-blocking first: with no reader this fails (ENXIO) instead of waiting for ever.
      const probe = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
      fds.push(openSync(path, 'w'));
      closeSync(probe);
    }
  } catch {
    for (const fd of fds) closeSync(fd);
    return false;
  }
  for (const [stream, fd] of [
    [process.stdout, fds[0]!],
    [process.stderr, fds[1]!],
  ] as const) {
    // The old socket's errors (EPIPE once written to) are no longer this process's business.
    stream.on('error', () => {});
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      try {
        writeSync(fd, typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      } catch {
        // The runner is gone: the job is ending.
      }
      const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      done?.();
      return true;
    }) as typeof stream.write;
  }
  return true;
}
