import { accessSync, constants, statSync } from 'node:fs';
import { isShmError } from './errors';
import { native } from './native';

/**
 * Why shared memory cannot be used in this process, or null when it can: for a module that must
 * decide before it creates anything (the sm rpi's query declines with this reason). Checks the
 * platform, that `shmDir` is a directory this user may write, and that the native addon loads.
 */
export function shmUnavailableReason(shmDir = '/dev/shm'): string | null {
  if (process.platform !== 'linux') {
    return `POSIX shared memory and futexes need Linux (this is ${process.platform})`;
  }
  try {
    if (!statSync(shmDir).isDirectory()) return `${shmDir} is not a directory`;
    accessSync(shmDir, constants.W_OK);
  } catch (err) {
    return `${shmDir} is not usable: ${(err as Error).message}`;
  }
  try {
    native();
  } catch (err) {
    if (isShmError(err, 'NATIVE_UNAVAILABLE')) return (err as Error).message;
    return `the @ssi/shm native addon does not load: ${(err as Error).message}`;
  }
  return null;
}
