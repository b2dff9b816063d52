import { LamError } from '@ssi/lam';

/**
 * Expands a Slurm per-node count list (`SLURM_TASKS_PER_NODE`, `SLURM_JOB_CPUS_PER_NODE`):
 * comma-separated counts, each optionally repeated, `2(x3),1` → [2, 2, 2, 1]. Malformed input
 * is a LamError naming the variable and the position.
 */
export function expandCounts(text: string, varName: string): number[] {
  const bad = (pos: number, what: string) =>
    new LamError(
      'BAD_ARGS',
      `malformed ${varName} at position ${pos + 1}: ${what}\n  ${text}\n  ${' '.repeat(pos)}^\n` +
        'Expected counts such as 2(x3),1 (what Slurm writes there).',
    );
  if (text.trim() === '') throw new LamError('BAD_ARGS', `${varName} is empty`);
  const out: number[] = [];
  let pos = 0;
  const number = (what: string): number => {
    const at = pos;
    while (pos < text.length && /[0-9]/.test(text[pos]!)) pos++;
    if (pos === at) {
      throw bad(
        at,
        at < text.length
          ? `"${text[at]}" where ${what} was expected`
          : `${what} is missing at the end`,
      );
    }
    const n = Number(text.slice(at, pos));
    if (!Number.isSafeInteger(n) || n < 1 || n > 1_000_000)
      throw bad(at, `${text.slice(at, pos)} is not a count from 1 to 1000000`);
    return n;
  };
  for (;;) {
    const count = number('a count');
    let times = 1;
    if (text[pos] === '(') {
      if (text[pos + 1] !== 'x') throw bad(pos + 1, 'a repeat is written "(xN)"');
      pos += 2;
      times = number('a repeat count');
      if (text[pos] !== ')') throw bad(pos, `"(x${times}" is not closed with ")"`);
      pos++;
    }
    if (out.length + times > 65_536) throw bad(0, 'more than 65536 nodes');
    for (let i = 0; i < times; i++) out.push(count);
    if (pos === text.length) return out;
    if (text[pos] !== ',') throw bad(pos, `"${text[pos]}" where "," or the end was expected`);
    pos++;
  }
}

/** The counts of `text`, which must give exactly one count per node. */
export function countsForNodes(text: string, varName: string, nodes: readonly string[]): number[] {
  const counts = expandCounts(text, varName);
  if (counts.length !== nodes.length) {
    throw new LamError(
      'BAD_ARGS',
      `${varName}=${text} gives ${counts.length} count(s) but the job has ${nodes.length} node(s) (${nodes.join(',')}); ` +
        'the two Slurm variables disagree: is this the environment of one job?',
    );
  }
  return counts;
}
