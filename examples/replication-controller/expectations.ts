/**
 * Writes the cache has not seen yet. Reconcile reads only the informers' caches, and a cache lags
 * the controller's own writes: right after creating two pods, the next reconcile (triggered, say,
 * by an unrelated pod change) may still see the old count and create two more. So the controller
 * remembers each pod it created or deleted, by key, until the cache confirms it — the pod event
 * arrived, or the cache shows it — and counts those pods as they will be.
 *
 * An expectation that is never confirmed (the event was lost in a relist, or someone deleted the
 * new pod before it was cached and the relist folded both away) expires after `ttlMs`, after which
 * the cache is believed again: the cost of a lost confirmation is a delay, never a stuck keeper.
 */
import type { ObjectKey } from '../../src/client/object-key.js';
import type { Clock } from '../../src/util/clock.js';

type Kind = 'create' | 'delete';

interface Expectation {
  owner: ObjectKey;
  kind: Kind;
  at: number;
}

/** What is still in flight for one owner, after dropping what the cache has confirmed. */
export interface Pending {
  /** Pods created but not cached yet. */
  creating: ReadonlySet<ObjectKey>;
  /** Pods deleted but still cached as active. */
  deleting: ReadonlySet<ObjectKey>;
}

export class Expectations {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #byPod = new Map<ObjectKey, Expectation>();

  constructor(clock: Clock, ttlMs: number) {
    this.#clock = clock;
    this.#ttlMs = ttlMs;
  }

  expect(owner: ObjectKey, pod: ObjectKey, kind: Kind): void {
    this.#byPod.set(pod, { owner, kind, at: this.#clock.now() });
  }

  /** A pod event: an add confirms a creation, a delete (or a deletionTimestamp) confirms a deletion. */
  observe(pod: ObjectKey, seen: 'present' | 'gone'): void {
    const e = this.#byPod.get(pod);
    if (e === undefined) return;
    if ((e.kind === 'create' && seen === 'present') || (e.kind === 'delete' && seen === 'gone'))
      this.#byPod.delete(pod);
  }

  /** Settle `owner`'s expectations against the active pods the cache holds now. */
  pending(owner: ObjectKey, active: ReadonlySet<ObjectKey>): Pending {
    const now = this.#clock.now();
    const creating = new Set<ObjectKey>();
    const deleting = new Set<ObjectKey>();
    for (const [pod, e] of this.#byPod) {
      if (e.owner !== owner) continue;
      const confirmed = e.kind === 'create' ? active.has(pod) : !active.has(pod);
      if (confirmed || now - e.at >= this.#ttlMs) this.#byPod.delete(pod);
      else (e.kind === 'create' ? creating : deleting).add(pod);
    }
    return { creating, deleting };
  }

  /** The write failed: nothing is in flight for `pod` after all. */
  cancel(pod: ObjectKey): void {
    this.#byPod.delete(pod);
  }

  /** The owner is gone: drop everything expected for it. */
  forget(owner: ObjectKey): void {
    for (const [pod, e] of this.#byPod) if (e.owner === owner) this.#byPod.delete(pod);
  }

  get size(): number {
    return this.#byPod.size;
  }
}
