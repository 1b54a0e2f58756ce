/**
 * What the daemon needs from a checkpoint: per watcher and sink, the state of each object the sink
 * last confirmed (and the deletions it confirmed lately), and per watcher the resourceVersion up to
 * which every sink confirmed every change. After a restart the daemon resumes the watch from that
 * resourceVersion, so the apiserver replays every change since, and skips what a sink's entries
 * show it already has. When the resourceVersion has expired it lists, compares with the entries
 * (`changes-since.ts`) and delivers what differs.
 *
 * Guarantees every implementation keeps (the contract suite in
 * `test/unit/raven/checkpoint/checkpoint-store-contract.ts` checks each):
 * - reads see every write made before them, flushed or not;
 * - a write is durable once `flush()` or `close()` has resolved; until then a crash may lose it,
 *   and the event is then delivered again after the restart (at-least-once, never lost), because
 *   the checkpoint can only lag behind what sinks confirmed, never run ahead;
 * - sinks are independent: recording for one never changes what another has;
 * - `hasCheckpoint` tells "never ran" (false) from "ran and saw nothing" (true, no entries);
 * - a confirmed resourceVersion is written in the same flush as the entries recorded before it,
 *   so a stored one never runs ahead of the stored entries;
 * - a confirmed deletion is kept (a tombstone: uid and resourceVersion) until the watcher's
 *   confirmed resourceVersion reaches it; no change at or below that is ever replayed.
 *
 * A watcher name identifies one resource, so an entry is keyed by (watcher, sink, object key).
 */
import type { KubeObject } from '../../client/kube-object.js';
import { makeObjectKey, objectKey, type ObjectKey } from '../../client/object-key.js';
import type { ChangeEvent } from '../model/change-event.js';
import { compareResourceVersions } from '../model/resource-version.js';

/** One object as a sink last confirmed it. */
export interface CheckpointEntry {
  key: ObjectKey;
  uid: string | undefined;
  resourceVersion: string | undefined;
  /** The delivered object, redacted as it was delivered. */
  object: KubeObject;
  /**
   * The resourceVersion at which this incarnation entered the watcher's scope, as the delivered
   * event said (`inScopeSince`): a tombstone for the entry is named by it (`eventId`). Undefined
   * when the event had none, and for entries written by an older Raven.
   */
  since?: string | undefined;
}

/** Where the watcher says an object's stretch in scope started (`ChangeEvent.inScopeSince`). */
export type InScopeSince = (object: KubeObject) => string | undefined;

/** A deletion a sink confirmed: kept until the watcher's confirmed resourceVersion passes it. */
export interface CheckpointTombstone {
  key: ObjectKey;
  uid: string | undefined;
  /** The resourceVersion of the delivered `deleted` event. */
  resourceVersion: string | undefined;
}

/** What a sink last confirmed for one object: a state, or its deletion. */
export interface ConfirmedState {
  uid: string | undefined;
  resourceVersion: string | undefined;
  deleted: boolean;
}

/** Where a watcher can resume: every sink confirmed every change up to `resourceVersion`. */
export interface ConfirmedVersion {
  resourceVersion: string;
  /** The watcher's scope (resource, namespaces, selectors) the resourceVersion is valid for. */
  scope: string;
  /** The sinks it is valid for: those routed from the watcher when it was recorded. */
  sinks: readonly string[];
  /** When it was recorded (milliseconds since the epoch, on the daemon's clock). */
  at: number;
}

export interface CheckpointStore {
  /**
   * Record that `sink` confirmed `event`: `added` and `modified` store the event's object,
   * `deleted` replaces it with a tombstone. Buffered; see {@link CheckpointStore.flush}.
   */
  recordDelivered(event: ChangeEvent, sink: string): void;
  /**
   * Record `objects` as delivered without delivering them, replacing whatever `sink` had for
   * `watcher`, tombstones included (the first run with `initial: none`); `since` says where each
   * one's stretch in scope started. Written at once, not buffered.
   */
  recordBaseline(watcher: string, sink: string, objects: Iterable<KubeObject>, since?: InScopeSince): void;
  /** What `sink` last confirmed for `watcher`, in key order (deleted objects not included). */
  entries(watcher: string, sink: string): Iterable<CheckpointEntry>;
  /** The deletions `sink` confirmed for `watcher` that are newer than its confirmed resourceVersion. */
  tombstones(watcher: string, sink: string): Iterable<CheckpointTombstone>;
  /**
   * What `sink` last confirmed for the object at `key`: its entry, its tombstone, or undefined.
   * With `uid`, for that incarnation's records (a sharded store keeps a name's incarnations in
   * their own parts); a store with one record per name ignores it, since one watch brings a
   * name's changes, re-creations included, in resourceVersion order.
   */
  confirmed(watcher: string, sink: string, key: ObjectKey, uid?: string): ConfirmedState | undefined;
  /** True once anything was recorded for (watcher, sink), even if nothing is left. */
  hasCheckpoint(watcher: string, sink: string): boolean;
  /**
   * Record that every sink confirmed every change of `watcher` up to `confirmed.resourceVersion`.
   * Buffered, and written in the same flush as the entries recorded before it; that flush drops
   * the watcher's tombstones at or below it.
   */
  recordConfirmedVersion(watcher: string, confirmed: ConfirmedVersion): void;
  /** The last confirmed resourceVersion recorded for `watcher`, if any. */
  confirmedVersion(watcher: string): ConfirmedVersion | undefined;
  /** Drop `watcher`'s confirmed resourceVersion (it must not be resumed from). Written at once. */
  forgetConfirmedVersion(watcher: string): void;
  /** Make every write so far durable. */
  flush(): Promise<void>;
  /** Flush, then release the store (and its file lock). Later calls throw `ERR_CHECKPOINT_CLOSED`. */
  close(): Promise<void>;
}

/** Storage counters, for metrics and tests. Buffered writes count once flushed. */
export interface CheckpointStats {
  /** (watcher, sink) pairs with a checkpoint. */
  checkpoints: number;
  /** Per-sink entries. */
  entries: number;
  /** Distinct object states; entries of several sinks at the same state share one. */
  states: number;
}

/**
 * The entry a delivered `added` or `modified` event leaves behind.
 *
 * @example
 * entryFromEvent(event).key; // 'default/web-0'
 */
export function entryFromEvent(event: ChangeEvent): CheckpointEntry {
  return {
    key: makeObjectKey(event.name, event.namespace),
    uid: event.uid,
    resourceVersion: event.resourceVersion,
    object: event.object,
    since: event.inScopeSince,
  };
}

/** The entry for an object recorded as a baseline, its stretch in scope started at `since`. */
export function entryFromObject(object: KubeObject, since?: string): CheckpointEntry {
  return {
    key: objectKey(object),
    uid: object.metadata?.uid,
    resourceVersion: object.metadata?.resourceVersion,
    object,
    since,
  };
}

/** The state a delivered event leaves behind, for {@link CheckpointStore.confirmed}. */
export function confirmedStateOf(event: ChangeEvent): ConfirmedState {
  return { uid: event.uid, resourceVersion: event.resourceVersion, deleted: event.type === 'deleted' };
}

/**
 * Whether a tombstone may go: the confirmed resourceVersion reached it (or the two cannot be
 * ordered, and the tombstone could never be used to skip anything).
 */
export function tombstoneExpired(tombstone: CheckpointTombstone, confirmed: string): boolean {
  const order = compareResourceVersions(tombstone.resourceVersion, confirmed);
  return order === undefined || order <= 0;
}

/** Code-unit order: the same on every platform and locale. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
