/**
 * The writes of one checkpoint transaction, as prepared statements: entries (each distinct object
 * state stored once and shared by the sinks that confirmed it), tombstones, and confirmed
 * resourceVersions.
 *
 * An entry costs as few statements as it can, since each one costs more in the WebAssembly binding
 * (parameters copied in; for a query, a row object and its column names copied out) than SQLite's
 * own work for it: the state is inserted unless present (`INSERT OR IGNORE`; looked up only when it
 * was) and remembered for the other sinks that confirmed it in the same transaction, and the entry
 * is upserted. The schema's triggers (`sqlite-schema.ts`) drop the key's tombstone when an entry
 * replaces it, and delete a state once no entry refers to it, within that same statement.
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
  /** The id of each state this transaction inserted or looked up, by {@link stateIdentity}. */
  readonly #ids = new Map<string, number>();
  readonly #markCheckpoint: sqlite.Statement;
  readonly #insertState: sqlite.Statement;
  readonly #stateId: sqlite.Statement;
  readonly #upsert: sqlite.Statement;
  readonly #delete: sqlite.Statement;
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
    // The object arrives as UTF-8 bytes and is stored as the same TEXT as before: the WebAssembly
    // binding copies bytes into its memory in one call, where a string is measured and encoded
    // character by character in JavaScript, which cost more than the rest of a flush.
    this.#insertState = prepare(
      'INSERT OR IGNORE INTO states (watcher, key, uid, resource_version, object) VALUES (?, ?, ?, ?, CAST(? AS TEXT))',
    );
    this.#stateId = prepare(
      'SELECT id FROM states WHERE watcher = ? AND key = ? AND uid = ? AND resource_version = ?',
    );
    this.#upsert = prepare(
      `INSERT INTO delivered (watcher, sink, key, state, since) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (watcher, sink, key) DO UPDATE SET state = excluded.state, since = excluded.since`,
    );
    this.#delete = prepare('DELETE FROM delivered WHERE watcher = ? AND sink = ? AND key = ?');
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
   * object's JSON as UTF-8, when a sink made it already (`serialisedObject`).
   */
  put(watcher: string, sink: string, entry: CheckpointEntry, json?: Uint8Array): void {
    const uid = entry.uid ?? '';
    const resourceVersion = entry.resourceVersion ?? '';
    const identity = stateIdentity(watcher, entry.key, uid, resourceVersion);
    let id = this.#ids.get(identity);
    if (id === undefined) {
      const object = json ?? Buffer.from(JSON.stringify(entry.object));
      const inserted = this.#insertState.run([watcher, entry.key, uid, resourceVersion, object]);
      id = Number(
        inserted.changes === 1
          ? inserted.lastInsertRowid
          : this.#stateId.get([watcher, entry.key, uid, resourceVersion])?.id,
      );
      this.#ids.set(identity, id);
    }
    this.#upsert.run([watcher, sink, entry.key, id, entry.since ?? null]);
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
    this.#delete.run([watcher, sink, tombstone.key]);
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

  finalize(): void {
    for (const statement of this.#statements) statement.finalize();
  }
}

/** A state's identity, as the UNIQUE constraint of `states` has it. */
function stateIdentity(watcher: string, key: string, uid: string, resourceVersion: string): string {
  return `${watcher}\u0000${key}\u0000${uid}\u0000${resourceVersion}`;
}
