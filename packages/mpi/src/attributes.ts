import type { Communicator } from './comm';

/**
 * An attribute key (`MPI_Comm_create_keyval`): the way a library or a coll module caches its own
 * data on a communicator. `copy` decides what a duplicate gets (return undefined: nothing, the
 * default); `delete` runs when the attribute is deleted or its communicator freed.
 */
export class Keyval<T = unknown> {
  private static next = 1;
  readonly id = Keyval.next++;

  constructor(
    readonly hooks: {
      copy?: (comm: Communicator, value: T) => T | undefined;
      delete?: (comm: Communicator, value: T) => void;
      name?: string;
    } = {},
  ) {}

  get name(): string {
    return this.hooks.name ?? `keyval ${this.id}`;
  }
}

/** The attributes of one communicator. */
export class AttributeStore {
  private readonly values = new Map<Keyval<unknown>, unknown>();

  get<T>(key: Keyval<T>): T | undefined {
    return this.values.get(key as Keyval<unknown>) as T | undefined;
  }

  set<T>(comm: Communicator, key: Keyval<T>, value: T): void {
    this.delete(comm, key);
    this.values.set(key as Keyval<unknown>, value);
  }

  delete<T>(comm: Communicator, key: Keyval<T>): void {
    const k = key as Keyval<unknown>;
    if (!this.values.has(k)) return;
    const value = this.values.get(k);
    this.values.delete(k);
    k.hooks.delete?.(comm, value);
  }

  /** What a duplicate of `from` gets: the values each key's copy hook returns. */
  copyInto(from: Communicator, to: AttributeStore): void {
    for (const [k, v] of this.values) {
      const copied = k.hooks.copy?.(from, v);
      if (copied !== undefined) to.values.set(k, copied);
    }
  }

  clear(comm: Communicator): void {
    for (const k of [...this.values.keys()]) this.delete(comm, k);
  }
}
