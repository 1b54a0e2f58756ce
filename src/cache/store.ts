/**
 * The cache's interfaces, split by who uses them. Controllers see a {@link StoreReader}; the
 * reflector that applies list and watch results sees a {@link StoreWriter}; whoever starts
 * controllers waits on {@link SyncStatus}. An implementation provides all three ({@link Store}).
 *
 * Guarantees every implementation makes (checked by the shared contract suite):
 * - reads return the objects as stored (after the transform), read-only;
 * - a write either applies completely or, when it throws, leaves the store unchanged;
 * - `replace` swaps the whole contents at once: no read ever mixes old and new contents, and the
 *   indexes always agree with the objects;
 * - `hasSynced` turns true on the first `replace` and stays true.
 */
import type { DeepReadonly } from './deep-freeze.js';
import type { ObjectKey } from '../client/object-key.js';

/** Name of the index every store keeps: namespaced objects indexed by `metadata.namespace`. */
export const NAMESPACE_INDEX = 'namespace';

/**
 * Maps an object to the index values it is listed under; return `[]` to leave it out. It must be a
 * pure function of the object.
 *
 * @example
 * const byNode: IndexFunc<Pod> = (pod) => (pod.spec?.nodeName ? [pod.spec.nodeName] : []);
 */
export type IndexFunc<T> = (obj: DeepReadonly<T>) => readonly string[];

/** User-defined indexes by name. */
export type Indexers<T> = Readonly<Record<string, IndexFunc<T>>>;

/** What controllers read. Arrays returned are fresh snapshots; the objects in them are shared. */
export interface StoreReader<T> {
  get(key: ObjectKey): DeepReadonly<T> | undefined;
  list(): DeepReadonly<T>[];
  keys(): ObjectKey[];
  readonly size: number;
  /** Objects listed under `value` in the index `indexName`; throws for an unknown index. */
  byIndex(indexName: string, value: string): DeepReadonly<T>[];
  /** Keys listed under `value` in the index `indexName`; throws for an unknown index. */
  indexKeys(indexName: string, value: string): ObjectKey[];
  /** Every value of the index `indexName` that at least one object is listed under. */
  listIndexValues(indexName: string): string[];
}

/** One object-level write: the key and the cached object before and after. */
export interface StoreChange<T> {
  key: ObjectKey;
  old: DeepReadonly<T> | undefined;
  new: DeepReadonly<T> | undefined;
}

/** What a `replace` changed, so a reflector can emit add / update / delete events. */
export interface ReplaceResult<T> {
  added: ObjectKey[];
  /** Present before and after with a different resourceVersion (or without one to compare). */
  updated: ObjectKey[];
  /** Present before and after with the same resourceVersion. */
  unchanged: ObjectKey[];
  deleted: ObjectKey[];
  /** The previous object of every updated, unchanged and deleted key. */
  old: ReadonlyMap<ObjectKey, DeepReadonly<T>>;
}

/**
 * What a reflector writes. Objects passed in are owned by the store from then on (they may be
 * frozen in place). Single-object writes record the object's resourceVersion as the last applied.
 */
export interface StoreWriter<T> {
  /** Insert or overwrite the object under its key. */
  add(obj: T): StoreChange<T>;
  /** Same as `add`; kept separate so call sites say what the watch event said. */
  update(obj: T): StoreChange<T>;
  /** Remove the object's key; `old` is undefined when it was not there. */
  delete(obj: T): StoreChange<T>;
  /** Swap the whole contents for `objects` (a relist) at `resourceVersion`, atomically. */
  replace(objects: Iterable<T>, resourceVersion: string): ReplaceResult<T>;
  /** The resourceVersion last applied by a write, if any. */
  readonly resourceVersion: string | undefined;
}

/** Whether the store has been filled by a first complete list. */
export interface SyncStatus {
  readonly hasSynced: boolean;
  /** Resolve once synced; reject with the signal's reason if it aborts first. */
  waitForSync(signal?: AbortSignal): Promise<void>;
}

/** A complete store: reader, writer and sync status. */
export interface Store<T> extends StoreReader<T>, StoreWriter<T>, SyncStatus {}
