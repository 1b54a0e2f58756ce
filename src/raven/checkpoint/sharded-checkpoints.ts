/**
 * A sharded replica's view of the shared checkpoint. The hash space is cut into parts
 * (`sharding.buckets`); what sinks confirmed is kept per part, as if each part of a watcher were
 * a watcher of its own (`<watcher>#<part>`): its entries, its tombstones, its confirmed
 * resourceVersion. A replica reads and writes only the parts it owns, so replicas never write the
 * same rows, and a part handed to another replica carries everything its last owner confirmed.
 *
 * To the daemon it is one store, as for a single replica:
 * - a change is recorded in its object's part (the hash of its uid or namespace);
 * - the confirmed resourceVersion a watcher reaches is recorded for each part it owns (never
 *   lowering a part's: every change up to the higher one was confirmed too);
 * - the watcher resumes from the lowest confirmed resourceVersion of its parts (parts handed over
 *   by a replica that died are behind the others), and a replayed change at or below its own
 *   part's confirmed resourceVersion is one every sink has: {@link ShardedCheckpoints.replayFloor}.
 */
import type { KubeObject } from '../../client/kube-object.js';
import { parseObjectKey, type ObjectKey } from '../../client/object-key.js';
import { bucketOf } from '../../watch/shard/assign-hash-space.js';
import { fnv1a64 } from '../../watch/shard/fnv1a64.js';
import type { ShardField } from '../../watch/shard/shard.js';
import { systemClock, type Clock } from '../../util/clock.js';
import type { ChangeEvent } from '../model/change-event.js';
import { compareResourceVersions } from '../model/resource-version.js';
import {
  compareKeys,
  type CheckpointEntry,
  type CheckpointStore,
  type CheckpointTombstone,
  type ConfirmedState,
  type ConfirmedVersion,
  type InScopeSince,
} from './checkpoint-store.js';

export interface ShardParts {
  field: ShardField;
  /** How many parts the hash space is cut into. */
  buckets: number;
  /** The parts this replica owns (indexes of `splitHashSpace(buckets)`). */
  owned: readonly number[];
  /** For the pacing of resume-point writes; default the system clock. */
  clock?: Clock;
}

/** How often a watcher's parts' resume points are handed to the store at most. */
export const RESUME_WRITE_MS = 1000;

/**
 * The checkpoint name of one part of a watcher. Watcher names never hold `#`, so these never
 * meet a watcher's own name.
 *
 * @example
 * partName('pods', 17); // => 'pods#17'
 */
export function partName(watcher: string, part: number): string {
  return `${watcher}#${part}`;
}

export class ShardedCheckpoints implements CheckpointStore {
  readonly #store: CheckpointStore;
  readonly #field: ShardField;
  readonly #buckets: number;
  readonly #owned: readonly number[];
  /** watcher -> part -> the part's confirmed resourceVersion as stored (read at first use). */
  readonly #stored = new Map<string, Map<number, ConfirmedVersion>>();
  /**
   * watcher -> the last confirmed resourceVersion recorded, which holds for every part owned
   * (one value per watcher: recording it costs the same however many parts are owned). A part's
   * floor is the higher of it and the part's stored one: {@link ShardedCheckpoints.#floorOf}.
   */
  readonly #latest = new Map<string, ConfirmedVersion>();
  /** The watchers whose latest confirmed resourceVersion was not handed to the store yet. */
  readonly #unwritten = new Set<string>();
  /** watcher -> when its parts' resume points were last handed to the store. */
  readonly #writtenAt = new Map<string, number>();
  /** watcher -> the highest resume point of its parts. */
  readonly #highest = new Map<string, string>();
  readonly #clock: Clock;

  constructor(store: CheckpointStore, parts: ShardParts) {
    this.#store = store;
    this.#field = parts.field;
    this.#buckets = parts.buckets;
    this.#owned = [...new Set(parts.owned)].sort((a, b) => a - b);
    this.#clock = parts.clock ?? systemClock;
  }

  /** The part an object with this uid and namespace is in. */
  partOf(uid: string | undefined, namespace: string | undefined): number {
    return bucketOf(fnv1a64((this.#field === 'uid' ? uid : namespace) ?? ''), this.#buckets);
  }

  /**
   * The resourceVersion up to which `sink` confirmed every change of `event`'s part: a replayed
   * change at or below it is one it has. Undefined when the part has none for that sink.
   */
  replayFloor(event: ChangeEvent, sink: string): string | undefined {
    this.#storedOf(event.watcher);
    // A change above every part's resume point (every live one) needs no hash of its uid.
    const highest = this.#highest.get(event.watcher);
    if (highest === undefined || compareResourceVersions(event.resourceVersion, highest) === 1)
      return undefined;
    const floor = this.#floorOf(event.watcher, this.partOf(event.uid, event.namespace));
    return floor?.sinks.includes(sink) === true ? floor.resourceVersion : undefined;
  }

  recordDelivered(event: ChangeEvent, sink: string): void {
    this.#store.recordDelivered({ ...event, watcher: this.#partOfEvent(event) }, sink);
  }

  recordBaseline(watcher: string, sink: string, objects: Iterable<KubeObject>, since?: InScopeSince): void {
    const byPart = new Map<number, KubeObject[]>(this.#owned.map((part) => [part, []]));
    for (const object of objects)
      byPart.get(this.partOf(object.metadata?.uid, object.metadata?.namespace))?.push(object);
    for (const [part, inPart] of byPart)
      this.#store.recordBaseline(partName(watcher, part), sink, inPart, since);
  }

  entries(watcher: string, sink: string): CheckpointEntry[] {
    const all = this.#owned.flatMap((part) => [...this.#store.entries(partName(watcher, part), sink)]);
    return all.sort((a, b) => compareKeys(a.key, b.key));
  }

  tombstones(watcher: string, sink: string): CheckpointTombstone[] {
    return this.#owned.flatMap((part) => [...this.#store.tombstones(partName(watcher, part), sink)]);
  }

  /**
   * What `sink` confirmed for `key` in the part of the incarnation `uid`: a part's records are in
   * the order of its replay, and the order of two parts' is not (a name deleted and made again is
   * in two parts, each confirmed to its own point). Without `uid`, the newest record of any part.
   */
  confirmed(watcher: string, sink: string, key: ObjectKey, uid?: string): ConfirmedState | undefined {
    if (uid !== undefined) {
      const part = this.partOf(uid, parseObjectKey(key).namespace);
      return this.#owned.includes(part)
        ? this.#store.confirmed(partName(watcher, part), sink, key)
        : undefined;
    }
    let newest: ConfirmedState | undefined;
    for (const part of this.#owned) {
      const state = this.#store.confirmed(partName(watcher, part), sink, key);
      if (state === undefined) continue;
      if (
        newest === undefined ||
        compareResourceVersions(state.resourceVersion, newest.resourceVersion) === 1
      )
        newest = state;
    }
    return newest;
  }

  hasCheckpoint(watcher: string, sink: string): boolean {
    return this.#owned.some((part) => this.#store.hasCheckpoint(partName(watcher, part), sink));
  }

  recordConfirmedVersion(watcher: string, confirmed: ConfirmedVersion): void {
    this.#storedOf(watcher);
    // Confirmed further already, for the same sinks: it stays.
    if (!dominates(confirmed, this.#latest.get(watcher))) return;
    this.#latest.set(watcher, confirmed);
    this.#raiseHighest(watcher, confirmed.resourceVersion);
    this.#unwritten.add(watcher);
    // Written at most once a RESUME_WRITE_MS: one row per part owned (up to `buckets`) in every
    // checkpoint write would cost more than the changes it confirms. A resume point written late
    // is an older one, which only means a longer replay after a crash.
    const now = this.#clock.now();
    if (now - (this.#writtenAt.get(watcher) ?? -Infinity) >= RESUME_WRITE_MS) {
      this.#writtenAt.set(watcher, now);
      this.#writeResumePoints(watcher);
    }
  }

  /**
   * The latest confirmed resourceVersion, handed to the store for every part it is the floor of
   * (a part stored further for the same sinks keeps its own).
   */
  #writeResumePoints(only?: string): void {
    for (const watcher of this.#unwritten) {
      if (only !== undefined && watcher !== only) continue;
      this.#unwritten.delete(watcher);
      const latest = this.#latest.get(watcher);
      if (latest === undefined) continue;
      for (const part of this.#owned)
        if (this.#floorOf(watcher, part) === latest)
          this.#store.recordConfirmedVersion(partName(watcher, part), latest);
    }
  }

  /**
   * Where the watcher's parts can resume together: the lowest of their confirmed
   * resourceVersions. Undefined when a part has none; a scope no part agrees on is returned as
   * `''`, which matches no watcher's scope (so the watcher lists).
   */
  confirmedVersion(watcher: string): ConfirmedVersion | undefined {
    let lowest: ConfirmedVersion | undefined;
    let scope: string | undefined;
    let sinks: readonly string[] | undefined;
    for (const part of this.#owned) {
      const confirmed = this.#store.confirmedVersion(partName(watcher, part));
      if (confirmed === undefined) return undefined;
      scope = scope === undefined || scope === confirmed.scope ? confirmed.scope : '';
      sinks = sinks === undefined ? confirmed.sinks : sinks.filter((sink) => confirmed.sinks.includes(sink));
      const order = compareResourceVersions(confirmed.resourceVersion, lowest?.resourceVersion);
      if (order === undefined && lowest !== undefined) return undefined;
      if (lowest === undefined || order === -1) lowest = confirmed;
    }
    if (lowest === undefined || scope === undefined || sinks === undefined) return undefined;
    return { ...lowest, scope, sinks };
  }

  /**
   * The parts' resume points are dropped; what they say of the sinks they were recorded for
   * still holds, so the replay floors stay (read first, if not yet).
   */
  forgetConfirmedVersion(watcher: string): void {
    this.#storedOf(watcher);
    // A resume point not yet written must not be written after this.
    this.#unwritten.delete(watcher);
    for (const part of this.#owned) this.#store.forgetConfirmedVersion(partName(watcher, part));
  }

  flush(): Promise<void> {
    this.#writeResumePoints();
    return this.#store.flush();
  }

  close(): Promise<void> {
    this.#writeResumePoints();
    return this.#store.close();
  }

  #raiseHighest(watcher: string, resourceVersion: string): void {
    const highest = this.#highest.get(watcher);
    if (highest === undefined || compareResourceVersions(resourceVersion, highest) === 1)
      this.#highest.set(watcher, resourceVersion);
  }

  #partOfEvent(event: ChangeEvent): string {
    return partName(event.watcher, this.partOf(event.uid, event.namespace));
  }

  /** What `part` is confirmed to: the latest recorded, unless the stored one is further. */
  #floorOf(watcher: string, part: number): ConfirmedVersion | undefined {
    const stored = this.#stored.get(watcher)?.get(part);
    const latest = this.#latest.get(watcher);
    return latest !== undefined && dominates(latest, stored) ? latest : stored;
  }

  /** The confirmed resourceVersion of each part owned, read from the store at first use. */
  #storedOf(watcher: string): Map<number, ConfirmedVersion> {
    let stored = this.#stored.get(watcher);
    if (stored === undefined) {
      stored = new Map();
      for (const part of this.#owned) {
        const confirmed = this.#store.confirmedVersion(partName(watcher, part));
        if (confirmed === undefined) continue;
        stored.set(part, confirmed);
        this.#raiseHighest(watcher, confirmed.resourceVersion);
      }
      this.#stored.set(watcher, stored);
    }
    return stored;
  }
}

/**
 * Whether `next` replaces `current` as a floor: unless `current` is for the same sinks and at
 * or above it (a floor is never lowered for the same sinks; other sinks start afresh).
 */
function dominates(next: ConfirmedVersion, current: ConfirmedVersion | undefined): boolean {
  return (
    current === undefined ||
    !sameSinks(current.sinks, next.sinks) ||
    compareResourceVersions(next.resourceVersion, current.resourceVersion) === 1
  );
}

function sameSinks(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((sink) => b.includes(sink));
}
