import { findSessionDir } from '@ssi/lam';
import { JOB_ENV, type JobContact } from '../job-runtime';
import { HUB_ENV } from './hub-protocol';

type Env = Record<string, string | undefined>;

/**
 * The contact of the job a process of `env` belongs to, for a process that joins it without
 * being started in it (a restored process image, `JobAdoption.join`): the job variables mpirun
 * gave this process and the session directory of its node's lamd. Made by the command that
 * mpirun started in the image's place, on the image's node.
 */
export function jobContactOf(env: Env = process.env): JobContact {
  const out: Record<string, string> = {};
  for (const name of [...Object.values(JOB_ENV), HUB_ENV.HUB]) {
    const v = env[name];
    if (v !== undefined) out[name] = v;
  }
  for (const name of [JOB_ENV.JOB_ID, JOB_ENV.RANK, JOB_ENV.SIZE, JOB_ENV.SECRET, HUB_ENV.HUB]) {
    if (!out[name]) {
      throw new Error(`${name} is not set: this process was not started by mpirun through a lamd`);
    }
  }
  return { env: out, sessionDir: findSessionDir(env) };
}
