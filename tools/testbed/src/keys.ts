import { TestbedError } from './errors';
import { run } from './run';

/** `ssh-keygen -t ed25519 -N '' -q -f file`: writes file (private) and file.pub. */
export async function generateKey(file: string, comment: string): Promise<void> {
  const r = await run('ssh-keygen', ['-t', 'ed25519', '-N', '', '-q', '-C', comment, '-f', file], {
    timeoutMs: 20_000,
    what: `ssh-keygen for ${file}`,
  });
  if (r.code !== 0) {
    throw new TestbedError(
      'START_FAILED',
      `ssh-keygen could not create ${file} (exit ${r.code}): ${r.stderr.trim()}`,
    );
  }
}
