/**
 * What the daemon needs from a checkpoint: per watcher and sink, the state of each object the sink
 * last confirmed. After a restart the daemon lists, compares with these entries
 * (`changes-since.ts`) and delivers exactly what changed while it was down.
 *
 * Guarantees every implementation keeps (the contract suite in
 * `test/unit/raven/checkpoint/checkpoint-store-contract.ts` checks each):
 * - reads see every write made before them, flushed or not;
 * - a write is durable once `flush()` or `close()` has resolved; until then a crash may lose it,
 *   and the event is then delivered again after the restart (at-least-once, never lost), because
 *   the checkpoint can only lag behind what sinks confirmed, never run ahead;
 * - sinks are independent: recording for one never changes what another has;
 * - `hasCheckpoint` tells "never ran" (false) from "ran and saw nothing" (true, no entries).
 *
 * A watcher name identifies one resource, so an entry is keyed by (watcher, sink, object key).
 */
import type { KubeObject } from '../../client/kube-object.js';
import { makeObjectKey, objectKey, type ObjectKey } from '../../cache/object-key.js';
import type { ChangeEvent } from '../change-event.js';

/** One object as a sink last confirmed it. */
export interface CheckpointEntry {
  key: ObjectKey;
  uid: string | undefined;
  resourceVersion: string | undefined;
  /** The delivered object, redacted as it was delivered. */
  object: KubeObject;
}

export interface CheckpointStore {
  /**
   * Record that `sink` confirmed `event`: `added` and `modified` store the event's object,
   * `deleted` forgets the key. Buffered; see {@link CheckpointStore.flush}.
   */
  recordDelivered(event: ChangeEvent, sink: string): void;
  /**
   * Record `objects` as delivered without delivering them, replacing whatever `sink` had for
   * `watcher` (the first run with `initial: none`). Written at once, not buffered.
   */
  recordBaseline(watcher: string, sink: string, objects: Iterable<KubeObject>): void;
  /** What `sink` last confirmed for `watcher`, in key order. */
  entries(watcher: string, sink: string): Iterable<CheckpointEntry>;
  /** True once anything was recorded for (watcher, sink), even if nothing is left. */
  hasCheckpoint(watcher: string, sink: string): boolean;
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
  };
}

/** The entry for an object recorded as a baseline. */
export function entryFromObject(object: KubeObject): CheckpointEntry {
  return {
    key: objectKey(object),
    uid: object.metadata?.uid,
    resourceVersion: object.metadata?.resourceVersion,
    object,
  };
}

/** Code-unit order: the same on every platform and locale. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
