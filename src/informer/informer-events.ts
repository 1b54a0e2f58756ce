/**
 * What an informer tells its handlers, after its store has been updated: the store is always at
 * least as new as the event a handler is looking at.
 */
import type { DeepReadonly } from '../cache/deep-freeze.js';

export type InformerEvent<T> =
  | { type: 'add'; object: DeepReadonly<T> }
  /** `resync`: a periodic re-delivery of an unchanged cached object (`old === new`). */
  | { type: 'update'; old: DeepReadonly<T>; new: DeepReadonly<T>; resync: boolean }
  /**
   * `object` is the object the DELETED event carried: its final state (deletionTimestamp,
   * finalizers, last status). `previous` is the state the cache held before. `tombstone`: the
   * deletion was inferred by a relist, its final state is unknown, and `object` is the last known
   * state (the same as `previous`).
   */
  | { type: 'delete'; object: DeepReadonly<T>; previous: DeepReadonly<T> | undefined; tombstone: boolean };

/** Handlers of one consumer. Each may be async; a throwing one is isolated (see handler-queue.ts). */
export interface EventHandlers<T> {
  add?: (object: DeepReadonly<T>) => void | Promise<void>;
  update?: (
    old: DeepReadonly<T>,
    updated: DeepReadonly<T>,
    info: { resync: boolean },
  ) => void | Promise<void>;
  delete?: (
    object: DeepReadonly<T>,
    info: { tombstone: boolean; previous: DeepReadonly<T> | undefined },
  ) => void | Promise<void>;
}
