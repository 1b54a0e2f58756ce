/**
 * The default checkpoint store: one SQLite file (compiled to WebAssembly, so no native build),
 * owned by one daemon at a time through a lock file beside it (`file-lock.ts`).
 *
 * Writes are batched: `recordDelivered` buffers in memory, and the buffer is written in one
 * transaction every `flushIntervalMs` (on the injected clock), on `flush()` and on `close()`.
 * Reads merge the buffer over the file, so they see every write. The crash window is one flush
 * interval: a delivery whose checkpoint was not yet flushed is delivered again after a restart
 * (at-least-once), never lost. A failed flush keeps the buffer and is retried on the next tick.
 *
 * Each distinct object state is stored once, shared by the sinks that confirmed it; a state no
 * sink refers to any more is deleted in the same transaction that released it. Confirmed
 * resourceVersions are buffered like deliveries and written in the same transaction as the
 * entries recorded before them, with the tombstones they reach dropped.
 */
import { rmdirSync } from 'node:fs';
import type sqlite from 'node-sqlite3-wasm';
import type { KubeObject } from '../../client/kube-object.js';
import { toObjectKey, type ObjectKey } from '../../client/object-key.js';
import { systemClock, type Clock, type TimerHandle } from '../../util/clock.js';
import { silentLogger, type Logger } from '../../util/logger.js';
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
import { FileLock, type FileLockOptions } from './file-lock.js';
import { openCheckpointDatabase } from './sqlite-schema.js';
import { StateWriter } from './sqlite-state-writer.js';
import { serialisedObject } from '../model/record-json.js';

export interface SqliteCheckpointStoreOptions {
  clock?: Clock;
  logger?: Logger;
  /**
   * How long a delivery may wait before its checkpoint is written. Default 1000 ms: one fsync'd
   * transaction a second whatever the event rate, and at most a second of redelivery after a crash.
   */
  flushIntervalMs?: number;
  /** Lock heartbeat and staleness; see `file-lock.ts`. */
  lock?: Omit<FileLockOptions, 'clock' | 'logger'>;
}

/**
 * A buffered write for one key: the entry to store (with its object's JSON when a sink already
 * made it), or the deletion to keep as a tombstone.
 */
type PendingWrite =
  { entry: CheckpointEntry; json: Uint8Array | undefined } | { deleted: CheckpointTombstone };

/** Buffered writes of one (watcher, sink). */
interface PendingPair {
  watcher: string;
  sink: string;
  writes: Map<ObjectKey, PendingWrite>;
}

interface StateRow {
  key: string;
  uid: string;
  resource_version: string;
  object: string;
}

const pairId = (watcher: string, sink: string): string => JSON.stringify([watcher, sink]);

/**
 * @example
 * const store = SqliteCheckpointStore.open('/var/lib/raven/checkpoints.db', { logger });
 * store.recordDelivered(event, 'audit-log');
 * await store.close();
 */
export class SqliteCheckpointStore implements CheckpointStore {
  readonly path: string;
  readonly #db: sqlite.Database;
  readonly #lock: FileLock;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #flushIntervalMs: number;
  readonly #pending = new Map<string, PendingPair>();
  readonly #pendingVersions = new Map<string, ConfirmedVersion>();
  #timer: TimerHandle | undefined;
  #closed = false;

  private constructor(
    path: string,
    db: sqlite.Database,
    lock: FileLock,
    options: SqliteCheckpointStoreOptions,
  ) {
    this.path = path;
    this.#db = db;
    this.#lock = lock;
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? silentLogger;
    this.#flushIntervalMs = options.flushIntervalMs ?? 1000;
  }

  /**
   * Lock and open (or create) the checkpoint file at `path`.
   *
   * @throws CheckpointError `ERR_CHECKPOINT_LOCKED`, `ERR_CHECKPOINT_UNREADABLE` or `ERR_CHECKPOINT_SCHEMA`.
   */
  static open(path: string, options: SqliteCheckpointStoreOptions = {}): SqliteCheckpointStore {
    const clock = options.clock ?? systemClock;
    const lock = FileLock.acquire(`${path}.owner`, path, {
      ...options.lock,
      clock,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
    try {
      // The SQLite file layer locks with a `<file>.lock` directory, left behind if a process dies
      // mid-transaction; holding our own lock proves no one else is using the file.
      rmdirIfPresent(`${path}.lock`);
      return new SqliteCheckpointStore(path, openCheckpointDatabase(path), lock, options);
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  recordDelivered(event: ChangeEvent, sink: string): void {
    this.#assertOpen();
    const entry = entryFromEvent(event);
    this.#pair(event.watcher, sink).writes.set(
      entry.key,
      event.type === 'deleted'
        ? { deleted: { key: entry.key, uid: entry.uid, resourceVersion: entry.resourceVersion } }
        : { entry, json: serialisedObject(event) },
    );
    this.#schedule();
  }

  recordConfirmedVersion(watcher: string, confirmed: ConfirmedVersion): void {
    this.#assertOpen();
    this.#pendingVersions.set(watcher, confirmed);
    this.#schedule();
  }

  confirmedVersion(watcher: string): ConfirmedVersion | undefined {
    this.#assertOpen();
    const pending = this.#pendingVersions.get(watcher);
    if (pending !== undefined) return pending;
    const row = this.#db.get(
      'SELECT resource_version, scope, sinks, confirmed_at FROM watchers WHERE watcher = ?',
      [watcher],
    ) as { resource_version: string; scope: string; sinks: string; confirmed_at: number | bigint } | null;
    return row === null
      ? undefined
      : {
          resourceVersion: row.resource_version,
          scope: row.scope,
          sinks: JSON.parse(row.sinks) as string[],
          at: Number(row.confirmed_at),
        };
  }

  forgetConfirmedVersion(watcher: string): void {
    this.#assertOpen();
    this.#pendingVersions.delete(watcher);
    this.#transaction(() => {
      this.#db.run('DELETE FROM watchers WHERE watcher = ?', [watcher]);
    });
  }

  recordBaseline(watcher: string, sink: string, objects: Iterable<KubeObject>, since?: InScopeSince): void {
    this.#assertOpen();
    const entries = [...objects].map((object) => entryFromObject(object, since?.(object)));
    this.#flushNow();
    this.#transaction(() => {
      this.#db.run('INSERT OR IGNORE INTO checkpoints (watcher, sink) VALUES (?, ?)', [watcher, sink]);
      this.#db.run('DELETE FROM delivered WHERE watcher = ? AND sink = ?', [watcher, sink]);
      this.#db.run('DELETE FROM tombstones WHERE watcher = ? AND sink = ?', [watcher, sink]);
      const writer = new StateWriter(this.#db);
      try {
        for (const entry of entries) writer.put(watcher, sink, entry);
      } finally {
        writer.finalize();
      }
      this.#db.run(
        'DELETE FROM states WHERE watcher = ? AND NOT EXISTS (SELECT 1 FROM delivered WHERE state = states.id)',
        [watcher],
      );
    });
  }

  entries(watcher: string, sink: string): CheckpointEntry[] {
    this.#assertOpen();
    const rows = this.#db.all(
      `SELECT d.key, s.uid, s.resource_version, s.object, d.since
         FROM delivered d JOIN states s ON s.id = d.state
        WHERE d.watcher = ? AND d.sink = ?`,
      [watcher, sink],
    ) as unknown as (StateRow & { since: string | null })[];
    const merged = new Map<ObjectKey, CheckpointEntry>();
    for (const row of rows) {
      merged.set(toObjectKey(row.key), {
        key: toObjectKey(row.key),
        uid: row.uid === '' ? undefined : row.uid,
        resourceVersion: row.resource_version === '' ? undefined : row.resource_version,
        object: JSON.parse(row.object) as KubeObject,
        since: row.since ?? undefined,
      });
    }
    for (const [key, write] of this.#pending.get(pairId(watcher, sink))?.writes ?? []) {
      if ('deleted' in write) merged.delete(key);
      else merged.set(key, write.entry);
    }
    return [...merged.keys()].sort(compareKeys).map((key) => merged.get(key) as CheckpointEntry);
  }

  tombstones(watcher: string, sink: string): CheckpointTombstone[] {
    this.#assertOpen();
    const rows = this.#db.all(
      'SELECT key, uid, resource_version FROM tombstones WHERE watcher = ? AND sink = ?',
      [watcher, sink],
    ) as unknown as Omit<StateRow, 'object'>[];
    const merged = new Map<ObjectKey, CheckpointTombstone>();
    for (const row of rows) merged.set(toObjectKey(row.key), tombstoneFromRow(row));
    for (const [key, write] of this.#pending.get(pairId(watcher, sink))?.writes ?? []) {
      if ('deleted' in write) merged.set(key, write.deleted);
      else merged.delete(key);
    }
    const confirmed = this.#pendingVersions.get(watcher)?.resourceVersion;
    return [...merged.values()].filter(
      (tombstone) => confirmed === undefined || !tombstoneExpired(tombstone, confirmed),
    );
  }

  confirmed(watcher: string, sink: string, key: ObjectKey): ConfirmedState | undefined {
    this.#assertOpen();
    const write = this.#pending.get(pairId(watcher, sink))?.writes.get(key);
    if (write !== undefined) {
      const { uid, resourceVersion } = 'deleted' in write ? write.deleted : write.entry;
      return { uid, resourceVersion, deleted: 'deleted' in write };
    }
    const row = this.#db.get(
      `SELECT s.uid, s.resource_version FROM delivered d JOIN states s ON s.id = d.state
        WHERE d.watcher = ? AND d.sink = ? AND d.key = ?`,
      [watcher, sink, key],
    );
    const deleted = row === null;
    const found =
      row ??
      this.#db.get(
        'SELECT uid, resource_version FROM tombstones WHERE watcher = ? AND sink = ? AND key = ?',
        [watcher, sink, key],
      );
    if (found === null) return undefined;
    const { uid, resourceVersion } = tombstoneFromRow({ key, ...found } as unknown as StateRow);
    return { uid, resourceVersion, deleted };
  }

  hasCheckpoint(watcher: string, sink: string): boolean {
    this.#assertOpen();
    return (
      this.#pending.has(pairId(watcher, sink)) ||
      this.#db.get('SELECT 1 AS found FROM checkpoints WHERE watcher = ? AND sink = ?', [watcher, sink]) !==
        null
    );
  }

  /** Counts in the file; buffered writes count once flushed. */
  stats(): CheckpointStats {
    this.#assertOpen();
    const count = (table: string): number =>
      Number(this.#db.get(`SELECT count(*) AS n FROM ${table}`)?.n ?? 0);
    return { checkpoints: count('checkpoints'), entries: count('delivered'), states: count('states') };
  }

  flush(): Promise<void> {
    return new Promise((resolve) => {
      this.#assertOpen();
      this.#flushNow();
      resolve();
    });
  }

  /**
   * Flush and release the file. If the last flush fails the file is released all the same and the
   * error is thrown: those deliveries are then redelivered after the restart, as after a crash.
   */
  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#closed) {
        resolve();
        return;
      }
      try {
        this.#flushNow();
      } finally {
        this.destroy();
      }
      resolve();
    });
  }

  /** Stop now: drop buffered writes (as a crash would), close the file and release the lock. */
  destroy(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending.clear();
    this.#pendingVersions.clear();
    try {
      this.#db.close();
    } finally {
      this.#lock.release();
    }
  }

  #onTimer(): void {
    this.#timer = undefined;
    if (this.#closed) return;
    try {
      this.#flushNow();
    } catch (err) {
      this.#logger.error({ err, path: this.path }, 'checkpoint flush failed; retrying at the next interval');
      this.#timer ??= this.#clock.setTimeout(() => {
        this.#onTimer();
      }, this.#flushIntervalMs);
    }
  }

  #schedule(): void {
    this.#timer ??= this.#clock.setTimeout(() => {
      this.#onTimer();
    }, this.#flushIntervalMs);
  }

  #flushNow(): void {
    if (this.#pending.size === 0 && this.#pendingVersions.size === 0) return;
    this.#transaction(() => {
      const writer = new StateWriter(this.#db);
      try {
        for (const { watcher, sink, writes } of this.#pending.values()) {
          writer.markCheckpoint(watcher, sink);
          for (const write of writes.values()) {
            if ('deleted' in write) writer.delete(watcher, sink, write.deleted);
            else writer.put(watcher, sink, write.entry, write.json);
          }
        }
        // After the entries: a confirmed resourceVersion never lands without what it confirms.
        for (const [watcher, confirmed] of this.#pendingVersions) writer.confirm(watcher, confirmed);
      } finally {
        writer.finalize();
      }
    });
    this.#pending.clear();
    this.#pendingVersions.clear();
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #transaction(body: () => void): void {
    try {
      this.#db.exec('BEGIN IMMEDIATE');
      body();
      this.#db.exec('COMMIT');
    } catch (err) {
      if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
      throw new CheckpointError(
        'ERR_CHECKPOINT_WRITE',
        `cannot write checkpoint file ${this.path}: ${(err as Error).message}`,
        { path: this.path, cause: err },
      );
    }
  }

  #pair(watcher: string, sink: string): PendingPair {
    const id = pairId(watcher, sink);
    let pair = this.#pending.get(id);
    if (pair === undefined) {
      pair = { watcher, sink, writes: new Map() };
      this.#pending.set(id, pair);
    }
    return pair;
  }

  #assertOpen(): void {
    if (this.#closed) {
      throw new CheckpointError('ERR_CHECKPOINT_CLOSED', `checkpoint file ${this.path} is closed`, {
        path: this.path,
      });
    }
  }
}

function tombstoneFromRow(row: Omit<StateRow, 'object'>): CheckpointTombstone {
  return {
    key: toObjectKey(row.key),
    uid: row.uid === '' ? undefined : row.uid,
    resourceVersion: row.resource_version === '' ? undefined : row.resource_version,
  };
}

function rmdirIfPresent(path: string): void {
  try {
    rmdirSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
