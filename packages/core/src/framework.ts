import type { Discovery, ModuleRecord } from './discovery';
import { SsiError } from './errors';
import type { FrameworkType } from './frameworks';
import { FRAMEWORKS } from './frameworks';
import type { OpenedModule } from './loader';
import { closeModule, openModule } from './loader';
import type { SsiModule } from './module';
import type { ParamRegistry } from './params';
import { unmetRequirement } from './requirements';
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
  /** The candidates: modules the selector allows, in discovery order. */
  private opened: OpenedModule<M>[] = [];
  /** Every module opened or being opened (candidates and by name), once each. */
  private readonly byName = new Map<string, Promise<OpenedModule<M>>>();
  /** The opened modules, last opened first: dependents close before what they require. */
  private lifo: OpenedModule<M>[] = [];
  /** Opened by name (requirements, fallbacks): open until `close`, whatever `closeAllBut` keeps. */
  private readonly kept = new Set<string>();
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
    for (const record of records) this.opened.push(await this.openOnce(record, []));
    return this.opened;
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
   * Opens one module of this type by name, once, with its parameters registered and its
   * requirements met, even when the selector leaves it out; it is no candidate and stays open
   * until `close`. For a module another builds on (crtcp on tcp) and coll's lam_basic.
   */
  async openByName(name: string): Promise<M> {
    const opened = await this.openRequired(name, []);
    if (opened?.available) return opened.module;
    const installed = this.candidates().map((c) => c.name);
    const why = opened
      ? `cannot run here: ${opened.reason}`
      : `is not installed (installed: ${installed.join(', ') || 'none'})`;
    const code = opened ? 'NONE_AVAILABLE' : 'NOT_FOUND';
    throw new SsiError(code, `${this.type} module "${name}" ${why}`);
  }

  /** `openByName`, but undefined when the module is not installed or cannot run. */
  async openFallback(name: string): Promise<M | undefined> {
    const opened = await this.openRequired(name, []);
    return opened?.available ? opened.module : undefined;
  }

  /** Where a selected module came from, for agreement checks and error messages. */
  recordOf(name: string) {
    return this.opened.find((o) => o.record.name === name)?.record;
  }

  /** Closes every candidate except `keep` and what was opened by name (and what they require). */
  async closeAllBut(keep: readonly string[]): Promise<void> {
    const closes = (o: OpenedModule<M>): o is OpenedModule<M> & { available: true } =>
      o.available && !keep.includes(o.record.name) && !this.kept.has(o.record.name);
    for (const o of this.opened.filter(closes)) {
      this.byName.delete(o.record.name);
      this.lifo = this.lifo.filter((x) => x !== o);
      await closeModule(o.module, this.verbose);
    }
    this.opened = this.opened.filter((o) => !closes(o));
  }

  /** Closes everything, dependents before what they require (last opened, first closed). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const o of this.lifo) if (o.available) await closeModule(o.module, this.verbose);
    this.opened = [];
    this.lifo = [];
    this.byName.clear();
  }

  /** Opens a module by name and keeps it; undefined when it is not installed. */
  private openRequired(name: string, chain: string[]): Promise<OpenedModule<M>> | undefined {
    const record = this.options.discovery.modules.find(
      (r) => r.type === this.type && r.name === name,
    );
    if (!record) return undefined;
    this.kept.add(name);
    return this.openOnce(record, chain);
  }

  /** Opens a record once per framework; `chain` is who required it, to report a cycle. */
  private openOnce(record: ModuleRecord, chain: string[]): Promise<OpenedModule<M>> {
    const known = this.byName.get(record.name);
    if (known) return known;
    const opened = this.openRecord(record, [...chain, record.name]);
    this.byName.set(record.name, opened);
    return opened;
  }

  /** Checks the record's requirements, opens those of this type by name, then the module. */
  private async openRecord(record: ModuleRecord, chain: string[]): Promise<OpenedModule<M>> {
    if (record.incompatible) return { record, available: false, reason: record.incompatible };
    for (const req of record.requires) {
      const installed = this.options.discovery.modules;
      const cycle = req.type === this.type && chain.includes(req.name);
      let reason = cycle
        ? `${this.type} modules require each other: ${[...chain, req.name].join(' → ')}`
        : unmetRequirement(record, req, installed);
      if (!reason && req.type === this.type) {
        const dep = await this.openRequired(req.name, chain);
        if (dep && !dep.available) reason = unmetRequirement(record, req, installed, dep.reason);
      }
      if (reason) {
        this.verbose.log(0, `${this.type} module ${record.name} is not available: ${reason}`);
        return { record, available: false, reason };
      }
    }
    this.verbose.log(100, `opening ${record.name} from ${record.location}`);
    const opened = await openModule<M>(record, this.options.params, this.verbose);
    this.lifo.unshift(opened);
    return opened;
  }
}
