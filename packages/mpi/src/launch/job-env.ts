import { hostname } from 'node:os';
import { ErrorClass, MpiError } from '../errors';
import { JOB_ENV } from '../job-runtime';

type Env = Record<string, string | undefined>;

/** What every launcher tells a process of a job through its environment (`JOB_ENV`). */
export interface JobEnvironment {
  jobId: string;
  rank: number;
  size: number;
  node: number;
  host: string;
  nodeName: string;
  secret: Buffer;
}

function need(env: Env, name: string, launcher: string): string {
  const v = env[name];
  if (v === undefined || v === '') {
    throw new MpiError(
      ErrorClass.ERR_OTHER,
      `${name} is not set: this process was not started by ${launcher}`,
    );
  }
  return v;
}

function int(env: Env, name: string, launcher: string): number {
  const n = Number(need(env, name, launcher));
  if (!Number.isInteger(n) || n < 0) {
    throw new MpiError(
      ErrorClass.ERR_OTHER,
      `${name}="${env[name]}" is not a non-negative integer`,
    );
  }
  return n;
}

/** `SSI_MAX_NODE_RANKS` when the launcher set it (a positive integer), else undefined. */
export function readMaxNodeRanks(env: Env): number | undefined {
  const n = Number(env[JOB_ENV.MAX_NODE_RANKS]);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/**
 * Reads the job variables. The secret is removed from `process.env` once read, so that the
 * program's own children do not inherit it.
 */
export function readJobEnvironment(env: Env, launcher: string): JobEnvironment {
  const rank = int(env, JOB_ENV.RANK, launcher);
  const size = int(env, JOB_ENV.SIZE, launcher);
  if (rank >= size) {
    throw new MpiError(
      ErrorClass.ERR_OTHER,
      `${JOB_ENV.RANK}=${rank} is not below ${JOB_ENV.SIZE}=${size}`,
    );
  }
  const secretHex = need(env, JOB_ENV.SECRET, launcher);
  if (!/^([0-9a-f]{2}){16,}$/i.test(secretHex)) {
    throw new MpiError(
      ErrorClass.ERR_OTHER,
      `${JOB_ENV.SECRET} is not a hex string of 16 or more bytes`,
    );
  }
  const out: JobEnvironment = {
    jobId: need(env, JOB_ENV.JOB_ID, launcher),
    rank,
    size,
    node: env[JOB_ENV.NODE_ID] ? int(env, JOB_ENV.NODE_ID, launcher) : 0,
    host: env[JOB_ENV.HOST_ADDR] || '127.0.0.1',
    nodeName: env[JOB_ENV.NODE_NAME] || hostname(),
    secret: Buffer.from(secretHex, 'hex'),
  };
  if (env === process.env) delete process.env[JOB_ENV.SECRET];
  return out;
}
