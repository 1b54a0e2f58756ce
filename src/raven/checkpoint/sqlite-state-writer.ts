/**
 * The writes of one checkpoint transaction, as prepared statements: entries (each distinct object
 * state stored once and shared by the sinks that confirmed it), tombstones, and confirmed
 * resourceVersions. It remembers the states the transaction released and deletes those no sink
 * refers to any more before the transaction commits.
 */
import type sqlite from 'node-sqlite3-wasm';
import type { ObjectKey } from '../../client/object-key.js';
import {
  tombstoneExpired,
  type CheckpointEntry,
  type CheckpointTombstone,
  type ConfirmedVersion,
} from './checkpoint-store.js';

export class StateWriter {
  readonly #statements: sqlite.Statement[] = [];
  readonly #released = new Set<number>();
  readonly #markCheckpoint: sqlite.Statement;
  readonly #current: sqlite.Statement;
  readonly #insertState: sqlite.Statement;
  readonly #stateId: sqlite.Statement;
  readonly #upsert: sqlite.Statement;
  readonly #delete: sqlite.Statement;
  readonly #dropIfUnused: sqlite.Statement;
  readonly #putTombstone: sqlite.Statement;
  readonly #dropTombstone: sqlite.Statement;
  readonly #tombstonesOf: sqlite.Statement;
  readonly #putVersion: sqlite.Statement;

  constructor(db: sqlite.Database) {
    const prepare = (sql: string): sqlite.Statement => {
      const statement = db.prepare(sql);
      this.#statements.push(statement);
      return statement;
    };
    this.#markCheckpoint = prepare('INSERT OR IGNORE INTO checkpoints (watcher, sink) VALUES (?, ?)');
    this.#current = prepare('SELECT state, since FROM delivered WHERE watcher = ? AND sink = ? AND key = ?');
    // The object arrives as UTF-8 bytes and is stored as the same TEXT as before: the WebAssembly
    // binding copies bytes into its memory in one call, where a string is measured and encoded
    // character by character in JavaScript, which cost more than the rest of a flush.
    this.#insertState = prepare(
      'INSERT INTO states (watcher, key, uid, resource_version, object) VALUES (?, ?, ?, ?, CAST(? AS TEXT))',
    );
    this.#stateId = prepare(
      'SELECT id FROM states WHERE watcher = ? AND key = ? AND uid = ? AND resource_version = ?',
    );
    this.#upsert = prepare(
      `INSERT INTO delivered (watcher, sink, key, state, since) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (watcher, sink, key) DO UPDATE SET state = excluded.state, since = excluded.since`,
    );
    this.#delete = prepare('DELETE FROM delivered WHERE watcher = ? AND sink = ? AND key = ?');
    this.#dropIfUnused = prepare(
      'DELETE FROM states WHERE id = ? AND NOT EXISTS (SELECT 1 FROM delivered WHERE state = ?)',
    );
    this.#putTombstone = prepare(
      `INSERT INTO tombstones (watcher, sink, key, uid, resource_version) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (watcher, sink, key) DO UPDATE SET uid = excluded.uid, resource_version = excluded.resource_version`,
    );
    this.#dropTombstone = prepare('DELETE FROM tombstones WHERE watcher = ? AND sink = ? AND key = ?');
    this.#tombstonesOf = prepare('SELECT sink, key, resource_version FROM tombstones WHERE watcher = ?');
    this.#putVersion = prepare(
      `INSERT INTO watchers (watcher, resource_version, scope, sinks, confirmed_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (watcher) DO UPDATE SET resource_version = excluded.resource_version,
         scope = excluded.scope, sinks = excluded.sinks, confirmed_at = excluded.confirmed_at`,
    );
  }

  markCheckpoint(watcher: string, sink: string): void {
    this.#markCheckpoint.run([watcher, sink]);
  }

  /**
   * Store `entry` as what `sink` last confirmed (it replaces a tombstone for the key). `json`: the
   * object's JSON text, when it was made already.
   */
  put(watcher: string, sink: string, entry: CheckpointEntry, json?: string): void {
    const identity = [watcher, entry.key, entry.uid ?? '', entry.resourceVersion ?? ''];
    const existing = this.#stateId.get(identity);
    const id = Number(
      existing === null
        ? this.#insertState.run([...identity, Buffer.from(json ?? JSON.stringify(entry.object))])
            .lastInsertRowid
        : existing.id,
    );
    const current = this.#current.get([watcher, sink, entry.key]);
    const previous = current === null ? undefined : Number(current.state);
    // A key has an entry or a tombstone, never both: only a key without an entry may have one.
    if (previous === undefined) this.#dropTombstone.run([watcher, sink, entry.key]);
    const since = entry.since ?? null;
    if (previous === id && (current?.since ?? null) === since) return;
    this.#upsert.run([watcher, sink, entry.key, id, since]);
    if (previous !== undefined && previous !== id) this.#released.add(previous);
  }

  /** Forget the key's entry and keep its deletion as a tombstone. */
  delete(watcher: string, sink: string, tombstone: CheckpointTombstone): void {
    this.#putTombstone.run([
      watcher,
      sink,
      tombstone.key,
      tombstone.uid ?? '',
      tombstone.resourceVersion ?? '',
    ]);
    const previous = this.#currentState(watcher, sink, tombstone.key);
    if (previous === undefined) return;
    this.#delete.run([watcher, sink, tombstone.key]);
    this.#released.add(previous);
  }

  /** Store the watcher's confirmed resourceVersion and drop the tombstones it reached. */
  confirm(watcher: string, confirmed: ConfirmedVersion): void {
    this.#putVersion.run([
      watcher,
      confirmed.resourceVersion,
      confirmed.scope,
      JSON.stringify(confirmed.sinks),
      confirmed.at,
    ]);
    const rows = this.#tombstonesOf.all([watcher]) as unknown as {
      sink: string;
      key: string;
      resource_version: string;
    }[];
    for (const row of rows) {
      const tombstone = {
        key: row.key as ObjectKey,
        uid: undefined,
        resourceVersion: row.resource_version === '' ? undefined : row.resource_version,
      };
      if (tombstoneExpired(tombstone, confirmed.resourceVersion))
        this.#dropTombstone.run([watcher, row.sink, row.key]);
    }
  }

  /** Delete the states this transaction released that no sink refers to any more. */
  collectGarbage(): void {
    for (const id of this.#released) this.#dropIfUnused.run([id, id]);
    this.#released.clear();
  }

  finalize(): void {
    for (const statement of this.#statements) statement.finalize();
  }

  #currentState(watcher: string, sink: string, key: string): number | undefined {
    const row = this.#current.get([watcher, sink, key]);
    return row === null ? undefined : Number(row.state);
  }
}
