import { LamError } from '../errors';
import { readSessionInfo } from '../session/session-info';

/**
 * lamgrow and lamshrink refuse to change a universe whose boot module fixed its nodes (a batch
 * job's nodes are the scheduler's, Ch. 4.3.5): the reason is in the local lamd's session.json.
 */
export function refuseResize(sessionDir: string | undefined, command: 'lamgrow' | 'lamshrink') {
  const info = sessionDir ? readSessionInfo(sessionDir) : undefined;
  if (info?.noResize) {
    throw new LamError(
      'BAD_ARGS',
      `${command} is not supported in this universe: ${info.noResize}`,
    );
  }
}
