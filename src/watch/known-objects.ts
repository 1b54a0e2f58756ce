/**
 * What a watcher remembers of every object it has delivered: its resourceVersion and uid, and
 * (unless told not to) the object itself, so that `modified` carries the previous state and a
 * relist can tell what changed, what vanished (tombstones) and what did not change (no event).
 */
import type { ObjectPeek } from './decode/peek.js';
import type { KubeObject } from './decode/watch-event.js';

export interface Known<T> {
  resourceVersion: string | undefined;
  uid: string | undefined;
  object: T | undefined;
}

/** `namespace/name`, or `name` for cluster-scoped objects. */
export function keyOf(
  meta: { namespace?: string | undefined; name?: string | undefined } | undefined,
): string {
  const name = meta?.name ?? '';
  const namespace = meta?.namespace;
  return namespace === undefined || namespace === '' ? name : `${namespace}/${name}`;
}

export class KnownObjects<T extends KubeObject> {
  readonly #map = new Map<string, Known<T>>();
  readonly #keepObjects: boolean;

  constructor(keepObjects: boolean) {
    this.#keepObjects = keepObjects;
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: string): Known<T> | undefined {
    return this.#map.get(key);
  }

  /** True when the object the peek describes is known at exactly that resourceVersion and uid. */
  unchanged(peek: ObjectPeek): boolean {
    if (peek.name === undefined || peek.resourceVersion === undefined) return false;
    const known = this.#map.get(keyOf(peek));
    return (
      known !== undefined &&
      known.resourceVersion === peek.resourceVersion &&
      (peek.uid === undefined || peek.uid === known.uid)
    );
  }

  set(key: string, object: T): Known<T> | undefined {
    const previous = this.#map.get(key);
    this.#map.set(key, {
      resourceVersion: object.metadata?.resourceVersion,
      uid: object.metadata?.uid,
      object: this.#keepObjects ? object : undefined,
    });
    return previous;
  }

  delete(key: string): Known<T> | undefined {
    const previous = this.#map.get(key);
    this.#map.delete(key);
    return previous;
  }

  keys(): IterableIterator<string> {
    return this.#map.keys();
  }

  /** The last known state, or a stub carrying what is known when objects are not kept. */
  lastState(key: string, known: Known<T>): T {
    if (known.object !== undefined) return known.object;
    const slash = key.indexOf('/');
    const metadata =
      slash < 0
        ? { name: key, resourceVersion: known.resourceVersion, uid: known.uid }
        : {
            namespace: key.slice(0, slash),
            name: key.slice(slash + 1),
            resourceVersion: known.resourceVersion,
            uid: known.uid,
          };
    return { metadata } as T;
  }
}
