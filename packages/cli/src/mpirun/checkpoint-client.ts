import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { isProcessAlive } from '@ssi/lam';
import { type CheckpointEvent, OLD_SERVER_HINT, parseEvent } from './checkpoint-protocol';
import { checkpointSocketPath, isJobId, readJobAlias } from './checkpoint-socket';

/** How a checkpoint request ended, as `lamcheckpoint` reports it. */
export type CheckpointReply =
  | Extract<CheckpointEvent, { event: 'done' }>
  | Extract<CheckpointEvent, { event: 'refused' }>
  | { event: 'unreachable'; reason: string }
  /** timed out, or the connection ended without an answer / with a line that is not one */
  | { event: 'failed'; reason: string };

export interface RequestOptions {
  timeoutMs: number;
  /** `preempt`: a drain notice (checkpoint, then the job ends); default `checkpoint`. */
  op?: 'checkpoint' | 'preempt';
  onProgress: (text: string) => void;
}

/** The mpirun pid a target names: a pid as is, a job id through its alias; undefined if none. */
export function resolveTarget(target: string): number | undefined {
  if (/^[1-9][0-9]*$/.test(target)) return Number(target);
  return isJobId(target) ? readJobAlias(target) : undefined;
}

/**
 * Asks the mpirun named by `target` (pid or job id) for a checkpoint and follows its answer.
 * Never throws for what the other side does: an mpirun that is not there, goes away or answers
 * nonsense is a reply saying so.
 */
export function requestCheckpoint(target: string, opts: RequestOptions): Promise<CheckpointReply> {
  const unreachable = {
    event: 'unreachable',
    reason: `no mpirun with pid/job ${target} accepts checkpoint requests here (was it started with --ssi cr <module>?)`,
  } as const;
  const pid = resolveTarget(target);
  if (pid === undefined) return Promise.resolve(unreachable);
  const path = checkpointSocketPath(pid);
  return new Promise((resolve) => {
    const socket = connect(path);
    let buffered = '';
    let settled = false;
    const finish = (reply: CheckpointReply) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(reply);
    };
    const timer = setTimeout(
      () =>
        finish({
          event: 'failed',
          reason: `mpirun ${pid} did not finish the checkpoint within ${opts.timeoutMs / 1000} s`,
        }),
      opts.timeoutMs,
    );
    const op = opts.op ?? 'checkpoint';
    socket.on('connect', () => socket.write(`${JSON.stringify({ op })}\n`));
    socket.on('error', () => {
      // A socket left by a dead mpirun: remove it, nobody will ever answer there.
      if (!isProcessAlive(pid)) rmSync(path, { force: true });
      finish(unreachable);
    });
    socket.on('data', (chunk) => {
      buffered += chunk.toString('utf8');
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const e = parseEvent(line);
        if (e?.event === 'progress') opts.onProgress(e.text);
        else if (
          e?.event === 'refused' &&
          op === 'preempt' &&
          e.reason.startsWith(OLD_SERVER_HINT)
        ) {
          finish({
            event: 'refused',
            reason: `mpirun ${pid} is of a release without --preempt (it answered: ${e.reason}); use lamcheckpoint without --preempt, then stop the job`,
          });
        } else if (e) finish(e);
        else finish({ event: 'failed', reason: `mpirun ${pid} answered ${JSON.stringify(line)}` });
      }
    });
    socket.on('close', () =>
      finish({ event: 'failed', reason: `mpirun ${pid} closed the connection without an answer` }),
    );
  });
}
