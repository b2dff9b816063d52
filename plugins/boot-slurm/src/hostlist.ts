import { LamError } from '@ssi/lam';

/** Most host names one hostlist expression may expand to (a typo such as `n[1-9999999]` is not a job). */
export const MAX_HOSTS = 65_536;

const NAME_CHAR = /[A-Za-z0-9._-]/;

function malformed(text: string, pos: number, what: string, varName: string): LamError {
  const caret = `${' '.repeat(pos)}^`;
  return new LamError(
    'BAD_ARGS',
    `malformed hostlist in ${varName} at position ${pos + 1}: ${what}\n  ${text}\n  ${caret}\n` +
      'Expected host names and bracket ranges such as node[1-4,7],gpu01 (what Slurm writes there).',
  );
}

type Piece = { text: string } | { choices: string[] };

/**
 * Expands a Slurm hostlist expression (`SLURM_JOB_NODELIST`): comma-separated host names, each
 * with any number of bracket groups of numbers and ranges, e.g. `node[1-4,7],gpu01`,
 * `n[001-010]` (a range keeps the width of its lower bound: n001 … n010), `r[1-2]-n[1-2]`
 * (r1-n1, r1-n2, r2-n1, r2-n2: the leftmost group varies slowest). Names come out in the order
 * written. Malformed input is a LamError naming the position.
 */
export function expandHostlist(text: string, varName = 'SLURM_JOB_NODELIST'): string[] {
  if (text.trim() === '') {
    throw new LamError('BAD_ARGS', `${varName} is empty: a Slurm job has at least one node`);
  }
  const hosts: string[] = [];
  let pos = 0;
  const bad = (p: number, what: string) => malformed(text, p, what, varName);

  while (pos <= text.length) {
    const start = pos;
    const pieces: Piece[] = [];
    let literal = '';
    while (pos < text.length && text[pos] !== ',') {
      const c = text[pos]!;
      if (c === '[') {
        if (literal) pieces.push({ text: literal });
        literal = '';
        const { choices, end } = parseGroup(text, pos, bad);
        pieces.push({ choices });
        pos = end;
        continue;
      }
      if (c === ']') throw bad(pos, `"]" without a matching "["`);
      if (/\s/.test(c)) throw bad(pos, 'white space inside a hostlist');
      if (!NAME_CHAR.test(c)) throw bad(pos, `"${c}" cannot be part of a host name`);
      literal += c;
      pos++;
    }
    if (literal) pieces.push({ text: literal });
    if (pieces.length === 0) throw bad(start, 'empty host name (two commas, or a comma at an end)');
    let names = [''];
    for (const p of pieces) {
      const next: string[] = [];
      const options = 'text' in p ? [p.text] : p.choices;
      if (names.length * options.length + hosts.length > MAX_HOSTS) {
        throw bad(start, `expands to more than ${MAX_HOSTS} hosts`);
      }
      for (const n of names) for (const o of options) next.push(n + o);
      names = next;
    }
    if (names.some((n) => n.startsWith('-') || n.startsWith('.'))) {
      throw bad(start, `a host name cannot start with "${names[0]![0]}"`);
    }
    hosts.push(...names);
    pos++; // past the comma (or the end)
  }
  return hosts;
}

/** One `[…]` group at `open`: its numbers, in order, and the position after `]`. */
function parseGroup(
  text: string,
  open: number,
  bad: (p: number, what: string) => LamError,
): { choices: string[]; end: number } {
  const choices: string[] = [];
  let pos = open + 1;
  const number = (): { digits: string; at: number } => {
    const at = pos;
    while (pos < text.length && /[0-9]/.test(text[pos]!)) pos++;
    if (pos === at) {
      if (pos >= text.length) throw bad(open, `"[" is never closed`);
      const c = text[pos]!;
      throw bad(
        pos,
        c === ']' || c === ',' || c === '-'
          ? `a number is missing before "${c}"`
          : `"${c}" in a range: expected a number`,
      );
    }
    return { digits: text.slice(at, pos), at };
  };
  for (;;) {
    const lo = number();
    let hi = lo;
    if (text[pos] === '-') {
      pos++;
      hi = number();
    }
    const a = Number(lo.digits);
    const b = Number(hi.digits);
    if (b < a) throw bad(lo.at, `the range ${lo.digits}-${hi.digits} runs backwards`);
    if (b - a + 1 > MAX_HOSTS)
      throw bad(lo.at, `the range ${lo.digits}-${hi.digits} has more than ${MAX_HOSTS} numbers`);
    for (let i = a; i <= b; i++) choices.push(String(i).padStart(lo.digits.length, '0'));
    if (pos >= text.length) throw bad(open, `"[" is never closed`);
    const c = text[pos]!;
    if (c === ',') {
      pos++;
      continue;
    }
    if (c === ']') return { choices, end: pos + 1 };
    if (c === '[') throw bad(pos, 'brackets cannot nest');
    throw bad(pos, `"${c}" in a range: expected ",", "-" or "]"`);
  }
}
