/**
 * A checkpoint store that lives only as long as the process: for tests, and for running without
 * a checkpoint file (every start is then a first run). Writes apply at once, so `flush()` has
 * nothing to do. Objects are kept by reference, as delivered; callers must not mutate them.
 */
import type { KubeObject } from '../../client/kube-object.js';
import type { ObjectKey } from '../../client/object-key.js';
import type { ChangeEvent } from '../model/change-event.js';
import { CheckpointError } from './checkpoint-error.js';
import {
  compareKeys,
  entryFromEvent,
  entryFromObject,
  tombstoneExpired,
  type CheckpointEntry,
  type CheckpointStats,
  type CheckpointStore,
  type CheckpointTombstone,
  type ConfirmedState,
  type ConfirmedVersion,
  type InScopeSince,
} from './checkpoint-store.js';

interface SharedState {
  entry: CheckpointEntry;
  refs: number;
}

const pairId = (watcher: string, sink: string): string => JSON.stringify([watcher, sink]);
/** A state with where its stretch in scope started: two sinks that disagree keep their own. */
const stateId = (watcher: string, entry: CheckpointEntry): string =>
  JSON.stringify([watcher, entry.key, entry.uid ?? '', entry.resourceVersion ?? '', entry.since ?? '']);

/**
 * @example
 * const store = new MemoryCheckpointStore();
 * store.recordDelivered(event, 'audit-log');
 * [...store.entries('deployments', 'audit-log')];
 */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly #states = new Map<string, SharedState>();
  /** pair id -> object key -> state id */
  readonly #checkpoints = new Map<string, Map<ObjectKey, string>>();
  /** pair id -> object key -> confirmed deletion */
  readonly #tombstones = new Map<string, Map<ObjectKey, CheckpointTombstone>>();
  /** watcher -> its sinks' tombstones: a confirmed resourceVersion visits only its own watcher's. */
  readonly #tombstonesByWatcher = new Map<string, Map<ObjectKey, CheckpointTombstone>[]>();
  readonly #versions = new Map<string, ConfirmedVersion>();
  #closed = false;

  recordDelivered(event: ChangeEvent, sink: string): void {
    this.#assertOpen();
    const entries = this.#pair(event.watcher, sink);
    const entry = entryFromEvent(event);
    const tombstones = this.#tombstonesOf(event.watcher, sink);
    if (event.type === 'deleted') {
      this.#release(entries.get(entry.key));
      entries.delete(entry.key);
      tombstones.set(entry.key, { key: entry.key, uid: entry.uid, resourceVersion: entry.resourceVersion });
      return;
    }
    tombstones.delete(entry.key);
    this.#put(event.watcher, entries, entry);
  }

  recordBaseline(watcher: string, sink: string, objects: Iterable<KubeObject>, since?: InScopeSince): void {
    this.#assertOpen();
    const entries = this.#pair(watcher, sink);
    const next = [...objects].map((object) => entryFromObject(object, since?.(object)));
    for (const id of entries.values()) this.#release(id);
    entries.clear();
    this.#tombstonesOf(watcher, sink).clear();
    for (const entry of next) this.#put(watcher, entries, entry);
  }

  /**
   * Load what a sink confirmed, as kept elsewhere (the PostgreSQL store reads its tables into a
   * memory store and answers reads from it). Adds to what the pair has; marks it as having a
   * checkpoint even when both lists are empty.
   */
  restore(
    watcher: string,
    sink: string,
    entries: Iterable<CheckpointEntry>,
    tombstones: Iterable<CheckpointTombstone>,
  ): void {
    this.#assertOpen();
    const pair = this.#pair(watcher, sink);
    for (const entry of entries) this.#put(watcher, pair, entry);
    const deleted = this.#tombstonesOf(watcher, sink);
    for (const tombstone of tombstones) deleted.set(tombstone.key, tombstone);
  }

  tombstones(watcher: string, sink: string): CheckpointTombstone[] {
    this.#assertOpen();
    const tombstones = this.#tombstones.get(pairId(watcher, sink));
    return tombstones === undefined ? [] : [...tombstones.values()];
  }

  confirmed(watcher: string, sink: string, key: ObjectKey): ConfirmedState | undefined {
    this.#assertOpen();
    const id = this.#checkpoints.get(pairId(watcher, sink))?.get(key);
    if (id !== undefined) {
      const { uid, resourceVersion } = this.#stateOf(id).entry;
      return { uid, resourceVersion, deleted: false };
    }
    const tombstone = this.#tombstones.get(pairId(watcher, sink))?.get(key);
    return tombstone === undefined
      ? undefined
      : { uid: tombstone.uid, resourceVersion: tombstone.resourceVersion, deleted: true };
  }

  recordConfirmedVersion(watcher: string, confirmed: ConfirmedVersion): void {
    this.#assertOpen();
    this.#versions.set(watcher, confirmed);
    for (const tombstones of this.#tombstonesByWatcher.get(watcher) ?? []) {
      for (const [key, tombstone] of tombstones)
        if (tombstoneExpired(tombstone, confirmed.resourceVersion)) tombstones.delete(key);
    }
  }

  confirmedVersion(watcher: string): ConfirmedVersion | undefined {
    this.#assertOpen();
    return this.#versions.get(watcher);
  }

  forgetConfirmedVersion(watcher: string): void {
    this.#assertOpen();
    this.#versions.delete(watcher);
  }

  entries(watcher: string, sink: string): CheckpointEntry[] {
    this.#assertOpen();
    const entries = this.#checkpoints.get(pairId(watcher, sink));
    if (entries === undefined) return [];
    return [...entries.keys()].sort(compareKeys).map((key) => this.#stateOf(entries.get(key)).entry);
  }

  hasCheckpoint(watcher: string, sink: string): boolean {
    this.#assertOpen();
    return this.#checkpoints.has(pairId(watcher, sink));
  }

  stats(): CheckpointStats {
    let entries = 0;
    for (const pair of this.#checkpoints.values()) entries += pair.size;
    return { checkpoints: this.#checkpoints.size, entries, states: this.#states.size };
  }

  flush(): Promise<void> {
    this.#assertOpen();
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }

  /** Stop now; for a memory store the same as `close()`. */
  destroy(): void {
    this.#closed = true;
  }

  #pair(watcher: string, sink: string): Map<ObjectKey, string> {
    const id = pairId(watcher, sink);
    let entries = this.#checkpoints.get(id);
    if (entries === undefined) {
      entries = new Map();
      this.#checkpoints.set(id, entries);
    }
    return entries;
  }

  #tombstonesOf(watcher: string, sink: string): Map<ObjectKey, CheckpointTombstone> {
    const id = pairId(watcher, sink);
    let tombstones = this.#tombstones.get(id);
    if (tombstones === undefined) {
      tombstones = new Map();
      this.#tombstones.set(id, tombstones);
      const ofWatcher = this.#tombstonesByWatcher.get(watcher);
      if (ofWatcher === undefined) this.#tombstonesByWatcher.set(watcher, [tombstones]);
      else ofWatcher.push(tombstones);
    }
    return tombstones;
  }

  #put(watcher: string, entries: Map<ObjectKey, string>, entry: CheckpointEntry): void {
    const id = stateId(watcher, entry);
    const previous = entries.get(entry.key);
    if (previous === id) return;
    const shared = this.#states.get(id);
    if (shared === undefined) this.#states.set(id, { entry, refs: 1 });
    else shared.refs++;
    entries.set(entry.key, id);
    this.#release(previous);
  }

  /** Drop one reference; a state no sink refers to is garbage-collected at once. */
  #release(id: string | undefined): void {
    if (id === undefined) return;
    const shared = this.#stateOf(id);
    if (--shared.refs === 0) this.#states.delete(id);
  }

  #stateOf(id: string | undefined): SharedState {
    const shared = id === undefined ? undefined : this.#states.get(id);
    if (shared === undefined) throw new Error(`checkpoint state ${String(id)} is missing (a bug)`);
    return shared;
  }

  #assertOpen(): void {
    if (this.#closed) {
      throw new CheckpointError('ERR_CHECKPOINT_CLOSED', 'the checkpoint store is closed');
    }
  }
}
