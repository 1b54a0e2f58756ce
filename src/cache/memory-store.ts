/**
 * The in-memory {@link Store}: objects by key, a namespace index, user-defined indexes, an
 * optional transform and read-only (frozen) objects.
 *
 * Atomicity: the contents live in one generation object (objects + index table). Single-object
 * writes compute everything that can throw (transform, key, index values) before touching the
 * generation, so a throwing write changes nothing. `replace` builds a complete new generation
 * off to the side and swaps it in with one assignment: a reader (even one called from inside the
 * transform or an index function during the replace) sees either the old or the new contents,
 * never a mix, and the indexes always match the objects.
 */
import type { KubeObject } from '../client/kube-object.js';
import { RavenError } from '../errors/raven-error.js';
import { deepFreeze, shouldFreeze, type DeepReadonly, type FreezeMode } from './deep-freeze.js';
import { IndexTable, type IndexValues } from './index-table.js';
import { objectKey, type ObjectKey } from '../client/object-key.js';
import {
  NAMESPACE_INDEX,
  type Indexers,
  type IndexFunc,
  type ReplaceResult,
  type Store,
  type StoreChange,
} from './store.js';

export interface MemoryStoreOptions<T> {
  /** Extra indexes by name; `namespace` is built in and cannot be redefined. */
  indexers?: Indexers<T>;
  /** Applied to every object before it is keyed, indexed and stored (e.g. `dropManagedFields`). */
  transform?: (obj: T) => T;
  /**
   * Deep-freeze stored objects, so that a reader writing to a shared object throws; default
   * `development`: only under `NODE_ENV=development` or `NODE_ENV=test` (see `deep-freeze.ts`).
   */
  freeze?: FreezeMode;
}

interface Generation<T> {
  items: Map<ObjectKey, DeepReadonly<T>>;
  index: IndexTable<T>;
}

interface Prepared<T> {
  key: ObjectKey;
  obj: DeepReadonly<T>;
  values: IndexValues;
}

const namespaceIndex: IndexFunc<KubeObject> = (obj) => {
  const ns = obj.metadata?.namespace;
  return ns === undefined || ns === '' ? [] : [ns];
};

/**
 * A store of Kubernetes objects held in memory.
 *
 * @example
 * const pods = new MemoryStore<Pod>({
 *   transform: dropManagedFields,
 *   indexers: { node: (pod) => (pod.spec?.nodeName ? [pod.spec.nodeName] : []) },
 * });
 * pods.replace(list.items, list.metadata.resourceVersion);
 * pods.byIndex('node', 'node-a');
 */
export class MemoryStore<T extends KubeObject> implements Store<T> {
  readonly #transform: (obj: T) => T;
  readonly #freeze: boolean;
  #gen: Generation<T>;
  #resourceVersion: string | undefined;
  #synced = false;
  readonly #syncWaiters = new Set<() => void>();

  constructor(options: MemoryStoreOptions<T> = {}) {
    const indexers = new Map<string, IndexFunc<T>>([[NAMESPACE_INDEX, namespaceIndex]]);
    for (const [name, fn] of Object.entries(options.indexers ?? {})) {
      if (indexers.has(name)) {
        throw new RavenError(
          'ERR_INVALID_INDEX',
          `index name ${JSON.stringify(name)} is built in; pick another`,
        );
      }
      indexers.set(name, fn);
    }
    this.#transform = options.transform ?? ((obj) => obj);
    this.#freeze = shouldFreeze(options.freeze ?? 'development');
    this.#gen = { items: new Map(), index: new IndexTable(indexers) };
  }

  get(key: ObjectKey): DeepReadonly<T> | undefined {
    return this.#gen.items.get(key);
  }

  list(): DeepReadonly<T>[] {
    return [...this.#gen.items.values()];
  }

  keys(): ObjectKey[] {
    return [...this.#gen.items.keys()];
  }

  get size(): number {
    return this.#gen.items.size;
  }

  byIndex(indexName: string, value: string): DeepReadonly<T>[] {
    const { items, index } = this.#gen;
    return index.keys(indexName, value).map((key) => items.get(key) as DeepReadonly<T>);
  }

  indexKeys(indexName: string, value: string): ObjectKey[] {
    return this.#gen.index.keys(indexName, value);
  }

  listIndexValues(indexName: string): string[] {
    return this.#gen.index.values(indexName);
  }

  get resourceVersion(): string | undefined {
    return this.#resourceVersion;
  }

  get hasSynced(): boolean {
    return this.#synced;
  }

  add(obj: T): StoreChange<T> {
    const next = this.#prepare(obj);
    const { items, index } = this.#gen;
    const old = items.get(next.key);
    if (old !== undefined) index.remove(next.key);
    items.set(next.key, next.obj);
    index.insert(next.key, next.values);
    this.#noteResourceVersion(obj);
    return { key: next.key, old, new: next.obj };
  }

  update(obj: T): StoreChange<T> {
    return this.add(obj);
  }

  delete(obj: T): StoreChange<T> {
    const key = objectKey(obj);
    const { items, index } = this.#gen;
    const old = items.get(key);
    if (old !== undefined) {
      items.delete(key);
      index.remove(key);
    }
    this.#noteResourceVersion(obj);
    return { key, old, new: undefined };
  }

  replace(objects: Iterable<T>, resourceVersion: string): ReplaceResult<T> {
    const prev = this.#gen;
    const next: Generation<T> = { items: new Map(), index: prev.index.emptyCopy() };
    for (const obj of objects) {
      const p = this.#prepare(obj);
      if (next.items.has(p.key)) next.index.remove(p.key); // a duplicate in the list: last wins
      next.items.set(p.key, p.obj);
      next.index.insert(p.key, p.values);
    }
    this.#gen = next;
    this.#resourceVersion = resourceVersion;
    const result = diff(prev.items, next.items);
    this.#markSynced();
    return result;
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(signal.reason as Error);
        return;
      }
      const onAbort = (): void => {
        this.#syncWaiters.delete(done);
        reject(signal?.reason as Error);
      };
      const done = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.#syncWaiters.add(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #prepare(input: T): Prepared<T> {
    const transformed = this.#transform(input);
    const key = objectKey(transformed);
    const obj = this.#freeze ? deepFreeze(transformed) : (transformed as DeepReadonly<T>);
    return { key, obj, values: this.#gen.index.compute(obj) };
  }

  #noteResourceVersion(obj: T): void {
    const rv = obj.metadata?.resourceVersion;
    if (rv !== undefined && rv !== '') this.#resourceVersion = rv;
  }

  #markSynced(): void {
    if (this.#synced) return;
    this.#synced = true;
    for (const done of this.#syncWaiters) done();
    this.#syncWaiters.clear();
  }
}

function resourceVersionOf(obj: unknown): string | undefined {
  return (obj as KubeObject).metadata?.resourceVersion;
}

function diff<T>(
  before: ReadonlyMap<ObjectKey, DeepReadonly<T>>,
  after: ReadonlyMap<ObjectKey, DeepReadonly<T>>,
): ReplaceResult<T> {
  const result: ReplaceResult<T> = { added: [], updated: [], unchanged: [], deleted: [], old: new Map() };
  const old = result.old as Map<ObjectKey, DeepReadonly<T>>;
  for (const [key, obj] of after) {
    const prev = before.get(key);
    if (prev === undefined) {
      result.added.push(key);
      continue;
    }
    old.set(key, prev);
    const rv = resourceVersionOf(obj);
    const same = rv !== undefined && rv !== '' && rv === resourceVersionOf(prev);
    (same ? result.unchanged : result.updated).push(key);
  }
  for (const [key, prev] of before) {
    if (!after.has(key)) {
      result.deleted.push(key);
      old.set(key, prev);
    }
  }
  return result;
}
