import type { Discovery } from './discovery';
import type { FrameworkType } from './frameworks';
import { FRAMEWORKS } from './frameworks';
import type { OpenedModule } from './loader';
import { closeModule, openModule } from './loader';
import type { SsiModule } from './module';
import type { ParamRegistry } from './params';
import type { Candidate, QueryAnswer, Selection, SelectorRequest } from './selection';
import { allows, parseSelector, selectModule } from './selection';
import type { VerboseStream } from './verbose';
import { createVerboseStream } from './verbose';

export interface FrameworkOptions {
  params: ParamRegistry;
  discovery: Discovery;
  /** Where verbose lines go; stderr by default. */
  write?: (line: string) => void;
}

/**
 * The life cycle every framework shares (Ch. 3.2.4, 3.2.7): open the modules of one type that the
 * user's selector allows, select among the available ones, and close them in the end. The
 * framework package adds its own query and scope on top.
 */
export class Framework<M extends SsiModule> {
  readonly verbose: VerboseStream;
  readonly request: SelectorRequest;
  private opened: OpenedModule<M>[] = [];
  private fallbacks: OpenedModule<M>[] = [];
  private closed = false;

  constructor(
    readonly type: FrameworkType,
    private readonly options: FrameworkOptions,
  ) {
    this.verbose = createVerboseStream(options.params, type, options.write);
    const selector = FRAMEWORKS[type].selector;
    this.request = parseSelector(options.params.rawSetting(selector)?.raw, selector);
  }

  /** Opens every allowed module of this type; incompatible ones are kept as unavailable. */
  async open(): Promise<OpenedModule<M>[]> {
    const records = this.options.discovery.modules.filter(
      (r) => r.type === this.type && allows(this.request, r.name),
    );
    for (const record of records) {
      if (record.incompatible) {
        this.opened.push({ record, available: false, reason: record.incompatible });
        continue;
      }
      this.verbose.log(100, `opening ${record.name} from ${record.location}`);
      this.opened.push(await openModule<M>(record, this.options.params, this.verbose));
    }
    return this.opened;
  }

  available(): M[] {
    return this.opened.flatMap((o) => (o.available ? [o.module] : []));
  }

  /** The opened modules, and the installed ones the selector left out (for error messages). */
  candidates(): Candidate<M>[] {
    const opened: Candidate<M>[] = this.opened.map((o) =>
      o.available
        ? { name: o.record.name, module: o.module }
        : { name: o.record.name, unavailable: o.reason },
    );
    const names = new Set(opened.map((c) => c.name));
    const leftOut = this.options.discovery.modules
      .filter((r) => r.type === this.type && !names.has(r.name))
      .map((r): Candidate<M> => ({ name: r.name }));
    return [...opened, ...leftOut];
  }

  /** Picks the best module for one scope with the framework's query. */
  async select<A>(
    query: (module: M) => QueryAnswer<A> | Promise<QueryAnswer<A>>,
  ): Promise<Selection<M, A>> {
    const selection = await selectModule<M, A>({
      type: this.type,
      selector: FRAMEWORKS[this.type].selector,
      request: this.request,
      candidates: this.candidates(),
      params: this.options.params,
      query,
    });
    this.verbose.log(
      0,
      `selected ${this.type} module ${selection.name} (priority ${selection.answer.priority})`,
    );
    for (const d of selection.declined) this.verbose.log(100, `${d.name} declined: ${d.reason}`);
    return selection;
  }

  /**
   * Opens one module by name even when the selector leaves it out, without making it a candidate:
   * the module a framework falls back on for what the selected one lacks (coll's lam_basic).
   */
  async openFallback(name: string): Promise<M | undefined> {
    const known = [...this.opened, ...this.fallbacks].find((o) => o.record.name === name);
    if (known) return known.available ? known.module : undefined;
    const record = this.options.discovery.modules.find(
      (r) => r.type === this.type && r.name === name && !r.incompatible,
    );
    if (!record) return undefined;
    const opened = await openModule<M>(record, this.options.params, this.verbose);
    this.fallbacks.push(opened);
    return opened.available ? opened.module : undefined;
  }

  /** Where a selected module came from, for agreement checks and error messages. */
  recordOf(name: string) {
    return this.opened.find((o) => o.record.name === name)?.record;
  }

  /** Closes every open module except `keep` (frameworks with one scope close the losers early). */
  async closeAllBut(keep: readonly string[]): Promise<void> {
    const stay: OpenedModule<M>[] = [];
    for (const o of this.opened) {
      if (o.available && !keep.includes(o.record.name)) await closeModule(o.module, this.verbose);
      else stay.push(o);
    }
    this.opened = stay;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.closeAllBut([]);
    for (const o of this.fallbacks) if (o.available) await closeModule(o.module, this.verbose);
    this.opened = [];
    this.fallbacks = [];
  }
}
