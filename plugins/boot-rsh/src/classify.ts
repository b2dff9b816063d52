import { type AgentResult, type BootNode, LamError, outputTail, type RteProcKind } from '@ssi/lam';

/** What hboot prints on success, by job. */
const EXPECTED: Record<RteProcKind, RegExp> = {
  lamd: /^lamd \d+ \d+$/m,
  recon: /^recon ok /m,
  wipe: /^wipe /m,
};

/**
 * Turns what the remote shell did into success or an error that names the host, says what
 * went wrong and what to do about it.
 */
export function classifyOutcome(
  r: AgentResult,
  node: BootNode,
  which: RteProcKind,
  agent: string,
  timeoutMs: number,
): LamError | undefined {
  const host = node.name;
  if (r.spawnError) {
    return new LamError(
      'LAUNCH_FAILED',
      `cannot run the remote shell "${agent}" to reach ${host}: ${r.spawnError}; set boot_rsh_agent`,
    );
  }
  if (r.timedOut) {
    return new LamError(
      'TIMEOUT',
      `"${agent}" to ${host} did not finish within ${timeoutMs / 1000} s (boot_base_timeout); is ${host} up and reachable?`,
    );
  }
  const err = r.stderr;
  if (r.code === 127 || /hboot: (command )?not found|hboot: No such file or directory/.test(err)) {
    const where = node.prefix ? ` (looked for ${node.prefix}/bin/hboot)` : ' (not on its PATH)';
    return new LamError(
      'NOT_INSTALLED',
      `lamd not found on ${host}${where}: install @ssi/cli there or set prefix= in the boot schema`,
    );
  }
  if (r.code === 255 && /ssh/.test(agent)) return sshFailure(host, err, node.user);
  if (r.code !== 0) {
    return new LamError(
      'LAUNCH_FAILED',
      `hboot failed on ${host} (${r.signal ?? `exit ${r.code}`}): ${outputTail(err || r.stdout, 3)}`,
    );
  }
  if (!EXPECTED[which].test(r.stdout)) {
    return new LamError(
      'LAUNCH_FAILED',
      `unexpected answer from ${host} (is something in its shell start-up printing?): ${outputTail(r.stdout, 3)}`,
    );
  }
  return undefined;
}

function sshFailure(host: string, stderr: string, user?: string): LamError {
  const who = user ? `${user}@${host}` : host;
  if (/Permission denied|Too many authentication failures|publickey/i.test(stderr)) {
    return new LamError(
      'LAUNCH_FAILED',
      `ssh to ${who} was refused (${outputTail(stderr, 3)}): set up password-less ssh (a key in ~/.ssh/authorized_keys on ${host})`,
    );
  }
  if (
    /Connection refused|No route to host|timed out|Could not resolve|Name or service not known|Network is unreachable/i.test(
      stderr,
    )
  ) {
    return new LamError('UNREACHABLE', `cannot reach ${host} with ssh: ${outputTail(stderr, 3)}`);
  }
  return new LamError('LAUNCH_FAILED', `ssh to ${who} failed: ${outputTail(stderr, 3)}`);
}
