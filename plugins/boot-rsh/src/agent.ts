import { basename } from 'node:path';

/**
 * The remote shell command (`boot_rsh_agent`), e.g. "ssh", "rsh", "ssh -F ~/.ssh/cluster".
 * Words are split on white space; quoting is not interpreted.
 */
export function parseAgent(text: string): string[] {
  return text.trim().split(/\s+/).filter(Boolean);
}

export function isSsh(agent: string[]): boolean {
  return basename(agent[0] ?? '').startsWith('ssh');
}

/** Single-quotes a word for the remote shell (the agent hands it a command string). */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./=:@-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The full command line that runs `command` on `host`: `<agent> [-l user] host command...`.
 * ssh gets BatchMode so that a missing key fails at once instead of asking for a password
 * nobody can type (stdin carries the boot configuration).
 */
export function agentArgv(
  agent: string[],
  host: string,
  user: string | undefined,
  command: string[],
): string[] {
  const batch =
    isSsh(agent) && !agent.some((w) => /batchmode/i.test(w)) ? ['-o', 'BatchMode=yes'] : [];
  return [
    ...agent,
    ...batch,
    ...(user ? ['-l', user] : []),
    host,
    command.map(shellQuote).join(' '),
  ];
}
