/**
 * The writes a checkpoint store has recorded but not yet written, for a store whose writes travel
 * to a server (`postgres-checkpoint-store.ts`). A flush takes the whole buffer and starts a new
 * one; if the flush fails, the taken buffer absorbs the newer one, so a retry writes both with
 * the newer writes winning, exactly as if the first flush had never been tried.
 *
 * Per (watcher, sink): the last write per object key (an entry, or a deletion to keep as a
 * tombstone), and whether the pair's stored checkpoint is replaced first (a baseline). Per
 * watcher: the confirmed resourceVersion to store, or that the stored one is forgotten.
 */
import type { ObjectKey } from '../../client/object-key.js';
import type { CheckpointEntry, CheckpointTombstone, ConfirmedVersion } from './checkpoint-store.js';

/** A buffered write for one key: the entry to store, or the deletion to keep as a tombstone. */
export type PendingWrite = { entry: CheckpointEntry } | { deleted: CheckpointTombstone };

/** Buffered writes of one (watcher, sink). */
export interface PendingPair {
  watcher: string;
  sink: string;
  /** Drop what is stored for the pair (entries and tombstones) before writing `writes`. */
  replace: boolean;
  writes: Map<ObjectKey, PendingWrite>;
}

const pairId = (watcher: string, sink: string): string => JSON.stringify([watcher, sink]);

export class PendingWrites {
  readonly pairs = new Map<string, PendingPair>();
  readonly versions = new Map<string, ConfirmedVersion>();
  readonly forgotten = new Set<string>();

  get empty(): boolean {
    return this.pairs.size === 0 && this.versions.size === 0 && this.forgotten.size === 0;
  }

  write(watcher: string, sink: string, key: ObjectKey, write: PendingWrite): void {
    this.#pair(watcher, sink).writes.set(key, write);
  }

  /** Replace the pair's checkpoint with `entries` (earlier buffered writes for it are moot). */
  baseline(watcher: string, sink: string, entries: Iterable<CheckpointEntry>): void {
    const writes = new Map<ObjectKey, PendingWrite>();
    for (const entry of entries) writes.set(entry.key, { entry });
    this.pairs.set(pairId(watcher, sink), { watcher, sink, replace: true, writes });
  }

  confirm(watcher: string, confirmed: ConfirmedVersion): void {
    this.forgotten.delete(watcher);
    this.versions.set(watcher, confirmed);
  }

  forget(watcher: string): void {
    this.versions.delete(watcher);
    this.forgotten.add(watcher);
  }

  /** Apply `later` on top of this buffer, as if its writes had been recorded here after ours. */
  absorb(later: PendingWrites): void {
    for (const [id, pair] of later.pairs) {
      const mine = this.pairs.get(id);
      if (pair.replace || mine === undefined) {
        this.pairs.set(id, { ...pair, writes: new Map(pair.writes) });
        continue;
      }
      for (const [key, write] of pair.writes) mine.writes.set(key, write);
    }
    for (const watcher of later.forgotten) this.forget(watcher);
    for (const [watcher, confirmed] of later.versions) this.confirm(watcher, confirmed);
  }

  /** The watchers whose rows this buffer touches (for collecting unreferenced states). */
  watchers(): string[] {
    const out = new Set<string>([...this.versions.keys(), ...this.forgotten]);
    for (const pair of this.pairs.values()) out.add(pair.watcher);
    return [...out];
  }

  #pair(watcher: string, sink: string): PendingPair {
    const id = pairId(watcher, sink);
    let pair = this.pairs.get(id);
    if (pair === undefined) {
      pair = { watcher, sink, replace: false, writes: new Map() };
      this.pairs.set(id, pair);
    }
    return pair;
  }
}
