/**
 * The reflector: a stream step that applies watcher events to a store and passes on what changed,
 * as informer events, only after the store holds it.
 *
 * A (re)list is applied at once: the events between `listing` and `synced` are buffered and then
 * written in one synchronous batch (the first list through `replace`, which also marks the store
 * synced), so no reader ever sees half of a relist. Live watch events are applied one by one.
 */
import type { DeepReadonly } from '../cache/deep-freeze.js';
import type { Store } from '../cache/store.js';
import type { KubeObject } from '../client/kube-object.js';
import { metadataKey } from '../client/object-key.js';
import type { WatcherEvent } from '../watch/watcher-events.js';
import type { InformerEvent } from './informer-events.js';

/** Besides informer events, the reflector passes on sync points and the watcher's errors. */
export type ReflectorOutput<T> =
  InformerEvent<T> | { type: 'synced'; relist: boolean } | { type: 'error'; error: Error };

type Change<T extends object> = Extract<
  WatcherEvent<T>,
  { type: 'initial' | 'added' | 'modified' | 'deleted' }
>;

/**
 * Apply `events` to `store`, yielding what changed.
 *
 * @example
 * for await (const change of reflect(store, watcher)) if (change.type === 'add') console.log(change.object);
 */
export async function* reflect<T extends KubeObject>(
  store: Store<T>,
  events: AsyncIterable<WatcherEvent<T>>,
): AsyncGenerator<ReflectorOutput<T>, void, undefined> {
  const reflector = new Reflector(store);
  for await (const event of events) yield* reflector.apply(event);
}

/**
 * The reflector as a synchronous step, for a caller that iterates the watcher itself (the
 * informer): {@link Reflector.apply} each watcher event and handle what it returns, with no
 * generator between the watcher and the caller.
 */
export class Reflector<T extends KubeObject> {
  readonly #store: Store<T>;
  #batch: Change<T>[] | undefined;

  constructor(store: Store<T>) {
    this.#store = store;
  }

  /** Apply one watcher event; what changed (after the store holds it), in order. */
  apply(event: WatcherEvent<T>): ReflectorOutput<T>[] {
    switch (event.type) {
      case 'listing':
        this.#batch ??= [];
        return [];
      case 'initial':
      case 'added':
      case 'modified':
      case 'deleted':
        if (this.#batch !== undefined) {
          this.#batch.push(event);
          return [];
        }
        return applyOne(this.#store, event);
      case 'synced': {
        const applied: ReflectorOutput<T>[] = applyBatch(
          this.#store,
          this.#batch ?? [],
          event.resourceVersion,
        );
        this.#batch = undefined;
        applied.push({ type: 'synced', relist: event.relist });
        return applied;
      }
      case 'error':
        return [{ type: 'error', error: event.error }];
      case 'bookmark':
        return [];
    }
  }
}

function applyOne<T extends KubeObject>(store: Store<T>, event: Change<T>): ReflectorOutput<T>[] {
  const change = event.type === 'deleted' ? store.delete(event.object) : store.update(event.object);
  const out: ReflectorOutput<T>[] = [];
  pushInformerEvent(out, change.old, change.new, event);
  return out;
}

function pushInformerEvent<T extends object>(
  out: ReflectorOutput<T>[],
  old: DeepReadonly<T> | undefined,
  now: DeepReadonly<T> | undefined,
  event: Change<T>,
): void {
  if (event.type === 'deleted') {
    // A live deletion carries the object's final state. A tombstone's final state is unknown: the
    // store's last state is the best there is (the watcher may keep only a stub).
    const object = event.tombstone
      ? (old ?? (event.object as DeepReadonly<T>))
      : (event.object as DeepReadonly<T>);
    out.push({ type: 'delete', object, previous: old, tombstone: event.tombstone });
    return;
  }
  if (now === undefined) return;
  if (old === undefined) out.push({ type: 'add', object: now });
  else out.push({ type: 'update', old, new: now, resync: false });
}

/** Write a whole list's results synchronously, then describe them. */
function applyBatch<T extends KubeObject>(
  store: Store<T>,
  batch: Change<T>[],
  resourceVersion: string,
): ReflectorOutput<T>[] {
  const out: ReflectorOutput<T>[] = [];
  if (!store.hasSynced) {
    // The first list: everything listed is the initial content, swapped in by replace().
    const objects = new Map<string, T>();
    for (const event of batch) {
      const key = metadataKey(event.object.metadata);
      if (event.type === 'deleted') objects.delete(key);
      else objects.set(key, event.object);
    }
    const result = store.replace(objects.values(), resourceVersion);
    for (const key of result.added) {
      const object = store.get(key);
      if (object !== undefined) out.push({ type: 'add', object });
    }
    return out;
  }
  for (const event of batch) {
    const change = event.type === 'deleted' ? store.delete(event.object) : store.update(event.object);
    pushInformerEvent(out, change.old, change.new, event);
  }
  return out;
}
