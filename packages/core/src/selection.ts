import { SsiError } from './errors';
import type { ParamRegistry } from './params';

/** `--ssi rpi tcp`, `--ssi coll smp,lam_basic` (only these), `--ssi rpi ^sm` (all but these). */
export interface SelectorRequest {
  include: string[] | null;
  exclude: string[];
  /** The text as the user gave it, for messages. */
  text?: string;
}

export function parseSelector(text: string | undefined, selector = 'selector'): SelectorRequest {
  if (text === undefined || text.trim() === '') return { include: null, exclude: [] };
  const trimmed = text.trim();
  const negate = trimmed.startsWith('^');
  const names = (negate ? trimmed.slice(1) : trimmed).split(',').map((s) => s.trim());
  if (names.some((n) => !/^[a-z][a-z0-9_]*$/.test(n))) {
    throw new SsiError(
      'BAD_ARGS',
      `--ssi ${selector} "${text}" is not a module list; expected "name", "a,b" or "^a,b" (exclude)`,
    );
  }
  return negate
    ? { include: null, exclude: names, text: trimmed }
    : { include: names, exclude: [], text: trimmed };
}

export function allows(request: SelectorRequest, name: string): boolean {
  if (request.exclude.includes(name)) return false;
  return request.include === null || request.include.includes(name);
}

/** A module the framework could use: available after open, or not, with the reason. */
export interface Candidate<M> {
  name: string;
  module?: M;
  unavailable?: string;
}

export type QueryAnswer<A> = (A & { priority: number }) | null | string;

export interface Ranked<A> {
  name: string;
  priority: number;
  answer: A & { priority: number };
}

export interface Selection<M, A> {
  name: string;
  module: M;
  answer: A & { priority: number };
  /** Every module that could run, best first. */
  ranking: Ranked<A>[];
  /** Every module that could not, with why. */
  declined: { name: string; reason: string }[];
}

export interface SelectOptions<M, A> {
  type: string;
  selector: string;
  request: SelectorRequest;
  candidates: Candidate<M>[];
  params: ParamRegistry;
  query: (module: M) => QueryAnswer<A> | Promise<QueryAnswer<A>>;
}

/**
 * Asks each allowed module whether it can run and at what priority (0-100); the highest wins,
 * ties broken by name so that every process decides alike (Ch. 3.2.7). A user-set
 * `<type>_<name>_priority` overrides what the module answers.
 */
export async function selectModule<M, A>(opts: SelectOptions<M, A>): Promise<Selection<M, A>> {
  const { request } = opts;
  const known = new Set(opts.candidates.map((c) => c.name));
  const missing = (request.include ?? []).filter((n) => !known.has(n));
  const ranking: Ranked<A>[] = [];
  const declined: { name: string; reason: string }[] = [];
  const modules = new Map<string, M>();

  for (const c of opts.candidates) {
    if (!allows(request, c.name)) continue;
    if (!c.module) {
      declined.push({ name: c.name, reason: c.unavailable ?? 'not available' });
      continue;
    }
    const answer = await askModule(opts, c.name, c.module);
    if (typeof answer === 'string') {
      declined.push({ name: c.name, reason: answer });
      continue;
    }
    modules.set(c.name, c.module);
    ranking.push({ name: c.name, priority: answer.priority, answer });
  }
  // Code-unit order, not localeCompare: the same in every locale (every process must decide
  // alike), and localeCompare's first call costs ~6 ms of ICU set-up in every process.
  ranking.sort((a, b) => b.priority - a.priority || compareCodeUnits(a.name, b.name));

  // Asking for exactly one module that declines is an error, not a silent fallback.
  const theOneDeclined =
    request.include?.length === 1 && declined.some((d) => d.name === request.include?.[0]);
  const best = ranking[0];
  if (missing.length > 0 || !best || theOneDeclined) {
    throw new SsiError(
      missing.length > 0 ? 'NOT_FOUND' : 'NONE_AVAILABLE',
      selectionFailure(opts, missing, declined, ranking),
    );
  }
  return {
    name: best.name,
    module: modules.get(best.name)!,
    answer: best.answer,
    ranking,
    declined,
  };
}

async function askModule<M, A>(
  opts: SelectOptions<M, A>,
  name: string,
  module: M,
): Promise<(A & { priority: number }) | string> {
  let answer: QueryAnswer<A>;
  try {
    answer = await opts.query(module);
  } catch (err) {
    return `its query failed: ${(err as Error).message}`;
  }
  if (answer === null || answer === undefined) return 'its query declined to run here';
  if (typeof answer === 'string') return answer;
  const paramName = `${opts.type}_${name}_priority`;
  const override = opts.params.isRegistered(paramName) ? opts.params.lookup(paramName) : undefined;
  const priority =
    override && override.source !== 'default' ? Number(override.value) : answer.priority;
  if (!Number.isInteger(priority) || priority < 0 || priority > 100) {
    const from =
      override && override.source !== 'default'
        ? `${paramName} from the ${override.source}`
        : 'its query';
    return `invalid priority ${priority} (from ${from}); priorities are integers 0-100`;
  }
  return { ...answer, priority };
}

function selectionFailure<M, A>(
  { type, selector, request, candidates }: SelectOptions<M, A>,
  missing: string[],
  declined: { name: string; reason: string }[],
  ranking: Ranked<A>[],
): string {
  const asked = request.text ? ` (--ssi ${selector} ${request.text})` : '';
  const head =
    missing.length > 0
      ? `${type} module${missing.length > 1 ? 's' : ''} ${missing.map((m) => `"${m}"`).join(', ')} requested${asked} but not installed.`
      : `no ${type} module can run here${asked}.`;
  const lines = candidates.map((c) => {
    const d = declined.find((x) => x.name === c.name);
    const r = ranking.find((x) => x.name === c.name);
    if (d) return `  ${c.name}: declined: ${d.reason}`;
    if (r) return `  ${c.name}: available (priority ${r.priority})`;
    if (c.unavailable) return `  ${c.name}: unavailable: ${c.unavailable}`;
    return `  ${c.name}: installed, not requested`;
  });
  const list = lines.length
    ? `Installed ${type} modules:\n${lines.join('\n')}`
    : `No ${type} modules are installed.`;
  return `${head}\n${list}\nRun "laminfo" to see what is installed and where it was found.`;
}

/** Orders strings by UTF-16 code units (locale-independent, and cheap). */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
