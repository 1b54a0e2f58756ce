/**
 * The index bookkeeping behind a store: for each index, which keys are listed under which value.
 * The values an object was listed under are remembered per key, so removing or replacing an object
 * never calls an index function on the old object again (and never depends on it being pure).
 *
 * Internal to the cache: {@link MemoryStore} owns one table per generation of its contents.
 */
import { RavenError } from '../errors/raven-error.js';
import type { DeepReadonly } from './deep-freeze.js';
import type { ObjectKey } from '../client/object-key.js';
import type { IndexFunc } from './store.js';

/** The values one object is listed under, one array per index (in index order). */
export type IndexValues = readonly (readonly string[])[];

export class IndexTable<T> {
  readonly #names: readonly string[];
  readonly #funcs: readonly IndexFunc<T>[];
  readonly #tables: Map<string, Set<ObjectKey>>[];
  readonly #valuesByKey = new Map<ObjectKey, IndexValues>();

  constructor(indexers: ReadonlyMap<string, IndexFunc<T>>) {
    this.#names = [...indexers.keys()];
    this.#funcs = [...indexers.values()];
    this.#tables = this.#names.map(() => new Map<string, Set<ObjectKey>>());
  }

  /** A new, empty table with the same indexes. */
  emptyCopy(): IndexTable<T> {
    return new IndexTable(new Map(this.#names.map((name, i) => [name, this.#funcs[i] as IndexFunc<T>])));
  }

  /** Run every index function on `obj`; throws whatever an index function throws. */
  compute(obj: DeepReadonly<T>): IndexValues {
    return this.#funcs.map((fn) => [...new Set(fn(obj))]);
  }

  /** List `key` under `values` (from {@link compute}); the key must not be listed already. */
  insert(key: ObjectKey, values: IndexValues): void {
    values.forEach((vals, i) => {
      const table = this.#tables[i];
      if (table === undefined) return;
      for (const value of vals) {
        let keys = table.get(value);
        if (keys === undefined) table.set(value, (keys = new Set()));
        keys.add(key);
      }
    });
    this.#valuesByKey.set(key, values);
  }

  /** Unlist `key` from every value it was inserted under. */
  remove(key: ObjectKey): void {
    const values = this.#valuesByKey.get(key);
    if (values === undefined) return;
    values.forEach((vals, i) => {
      const table = this.#tables[i];
      if (table === undefined) return;
      for (const value of vals) {
        const keys = table.get(value);
        keys?.delete(key);
        if (keys?.size === 0) table.delete(value);
      }
    });
    this.#valuesByKey.delete(key);
  }

  keys(indexName: string, value: string): ObjectKey[] {
    const keys = this.#table(indexName).get(value);
    return keys === undefined ? [] : [...keys];
  }

  values(indexName: string): string[] {
    return [...this.#table(indexName).keys()];
  }

  #table(indexName: string): Map<string, Set<ObjectKey>> {
    const table = this.#tables[this.#names.indexOf(indexName)];
    if (table === undefined) {
      throw new RavenError(
        'ERR_UNKNOWN_INDEX',
        `unknown index ${JSON.stringify(indexName)}; this store has: ${this.#names.join(', ')}`,
      );
    }
    return table;
  }
}
