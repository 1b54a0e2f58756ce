/**
 * What a watcher yields, and the status it exposes at any time.
 *
 * The event stream is the truth about changes, with one documented weakness shared by every
 * list+watch client: when the server can no longer replay history (410 Expired), the watcher
 * relists and delivers objects that vanished in between as `deleted` with `tombstone: true` —
 * their final state is unknown, `object` is the last state the watcher saw.
 */
import type { KubeObject } from './decode/watch-event.js';
import type { FieldManagerChange } from './field-managers.js';

export type { KubeObject };

/** One change, as the consumer sees it. */
export type WatcherEvent<T extends object = KubeObject> =
  /**
   * A (re)list begins: the events up to the next `synced` are its results. A consumer that must
   * swap its view atomically (a cache) buffers them until `synced`.
   */
  | { type: 'listing'; relist: boolean }
  /** An object that existed when the watcher first listed (before the first `synced`). */
  | { type: 'initial'; object: T }
  /** A (re)list is complete: every object that exists has been delivered. */
  | { type: 'synced'; resourceVersion: string; relist: boolean }
  | { type: 'added'; object: T }
  /**
   * `previous` is the last state seen, unless the watcher was told not to keep objects.
   * `managers`: the managedFields entries that differ from the last state's (who wrote this
   * change; `changedBy` lays them over the changed paths); absent when unknown (no entries were
   * known for the last state, `fieldManagers: false`, or a CBOR watch dropping managedFields).
   */
  | { type: 'modified'; object: T; previous: T | undefined; managers?: FieldManagerChange[] }
  /** `tombstone`: the deletion was inferred by a relist and `object` is the last known state. */
  | { type: 'deleted'; object: T; tombstone: boolean }
  /** The server confirmed progress up to `resourceVersion` without a change. */
  | { type: 'bookmark'; resourceVersion: string }
  /** Something failed; the watcher is already recovering (see `status`). */
  | { type: 'error'; error: Error; status: WatcherStatus };

/** Where the watcher is now. */
export type WatcherPhase = 'listing' | 'watching' | 'backoff' | 'failing' | 'stopped';

export interface WatcherStatus {
  phase: WatcherPhase;
  /** True once the first list completed. */
  synced: boolean;
  /** The last resourceVersion seen (from a list, an event or a bookmark). */
  resourceVersion: string | undefined;
  /** The last error, with the Status message when the apiserver sent one. */
  lastError: { message: string; kind: string; at: number } | undefined;
  /** Milliseconds since the epoch of the last event or bookmark received. */
  lastEventAt: number | undefined;
  /** Seconds since the last event or bookmark (or since start). */
  secondsSinceLastEvent: number;
  /** Lists after the first one (410 Expired, or a resume that could not work); every list of a resumed watcher. */
  relists: number;
  /** Watch streams opened after the first one. */
  reconnects: number;
  /** Consecutive failures now (0 when healthy). */
  failures: number;
  /** Whether the streaming initial list (sendInitialEvents) is in use. */
  watchList: boolean;
  /** Objects the watcher currently knows of. */
  objects: number;
}

/** The status of a watcher that has not started (or has stopped). */
export function stoppedStatus(): WatcherStatus {
  return {
    phase: 'stopped',
    synced: false,
    resourceVersion: undefined,
    lastError: undefined,
    lastEventAt: undefined,
    secondsSinceLastEvent: 0,
    relists: 0,
    reconnects: 0,
    failures: 0,
    watchList: false,
    objects: 0,
  };
}
