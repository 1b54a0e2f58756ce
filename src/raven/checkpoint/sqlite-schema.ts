/**
 * The checkpoint file's schema, and opening a file safely: a file Raven cannot read, or one a newer
 * Raven wrote, is refused with a message naming the file and what to do, never overwritten.
 *
 * Journal: a rollback journal in DELETE mode with `synchronous = FULL`, so a committed flush
 * survives power loss and a crash mid-flush is rolled back on the next open. WAL would make
 * commits cheaper, but it needs a shared-memory index the WebAssembly file layer does not
 * provide (asking for it leaves the file in DELETE mode), and at one commit per flush interval
 * the journal's extra fsync costs nothing that matters.
 */
import sqlite from 'node-sqlite3-wasm';
import { CheckpointError } from './checkpoint-error.js';

/** Bump when the schema changes, and add the step from the previous version to `MIGRATIONS`. */
export const SCHEMA_VERSION = 3;

/**
 * - `checkpoints`: which (watcher, sink) pairs have one at all ("ran and saw nothing" is a row here);
 * - `states`: each distinct delivered object state once, as redacted JSON (`''` for a missing uid
 *   or resourceVersion, as UNIQUE treats NULLs as all different);
 * - `delivered`: per (watcher, sink, key), the state that sink last confirmed, and (version 3)
 *   `since`, the resourceVersion at which the incarnation entered the watcher's scope (NULL when
 *   unknown: rows written before version 3);
 * - `tombstones` (version 2): per (watcher, sink, key), a deletion that sink confirmed, kept until
 *   the watcher's confirmed resourceVersion reaches it;
 * - `watchers` (version 2): per watcher, the resourceVersion up to which every sink confirmed
 *   every change, the scope and sinks (a JSON list) it is valid for, and when it was recorded.
 */
const RESUME_TABLES = `
CREATE TABLE tombstones (
  watcher TEXT NOT NULL,
  sink TEXT NOT NULL,
  key TEXT NOT NULL,
  uid TEXT NOT NULL,
  resource_version TEXT NOT NULL,
  PRIMARY KEY (watcher, sink, key)
) WITHOUT ROWID;
CREATE TABLE watchers (
  watcher TEXT PRIMARY KEY,
  resource_version TEXT NOT NULL,
  scope TEXT NOT NULL,
  sinks TEXT NOT NULL,
  confirmed_at INTEGER NOT NULL
) WITHOUT ROWID;
`;

const SCHEMA = `
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE checkpoints (
  watcher TEXT NOT NULL,
  sink TEXT NOT NULL,
  PRIMARY KEY (watcher, sink)
) WITHOUT ROWID;
CREATE TABLE states (
  id INTEGER PRIMARY KEY,
  watcher TEXT NOT NULL,
  key TEXT NOT NULL,
  uid TEXT NOT NULL,
  resource_version TEXT NOT NULL,
  object TEXT NOT NULL,
  UNIQUE (watcher, key, uid, resource_version)
);
CREATE TABLE delivered (
  watcher TEXT NOT NULL,
  sink TEXT NOT NULL,
  key TEXT NOT NULL,
  state INTEGER NOT NULL REFERENCES states (id),
  since TEXT,
  PRIMARY KEY (watcher, sink, key)
) WITHOUT ROWID;
CREATE INDEX delivered_by_state ON delivered (state);
${RESUME_TABLES}`;

/**
 * What keeps `states` and `tombstones` consistent with `delivered`, inside SQLite, so a flush
 * needs no statement of its own for it (each statement through the WebAssembly binding costs more
 * than the work SQLite does for it):
 * - a new entry replaces the key's tombstone (a key has an entry or a tombstone, never both);
 * - a state no entry refers to any more is deleted when the last entry moves off it or goes.
 *
 * Created on every open when missing (`IF NOT EXISTS`), not by a migration: they change no table,
 * so a file with them is still schema version 3, and a Raven that predates them still opens it
 * (its own clean-up then finds those states already gone).
 */
const TRIGGERS = `
CREATE TRIGGER IF NOT EXISTS delivered_replaces_tombstone AFTER INSERT ON delivered BEGIN
  DELETE FROM tombstones WHERE watcher = new.watcher AND sink = new.sink AND key = new.key;
END;
CREATE TRIGGER IF NOT EXISTS delivered_moved_off_state AFTER UPDATE OF state ON delivered
WHEN old.state <> new.state BEGIN
  DELETE FROM states WHERE id = old.state AND NOT EXISTS (SELECT 1 FROM delivered WHERE state = old.state);
END;
CREATE TRIGGER IF NOT EXISTS delivered_dropped AFTER DELETE ON delivered BEGIN
  DELETE FROM states WHERE id = old.state AND NOT EXISTS (SELECT 1 FROM delivered WHERE state = old.state);
END;
`;

/** Steps from version i+1 to i+2. */
const MIGRATIONS: readonly string[] = [
  // 1 → 2: where to resume the watch, and the deletions that tell replayed changes apart.
  RESUME_TABLES,
  // 2 → 3: where each entry's stretch in scope started, which names its deletion (NULL: unknown).
  'ALTER TABLE delivered ADD COLUMN since TEXT',
];

function unreadable(path: string, what: string, cause: unknown): CheckpointError {
  return new CheckpointError(
    'ERR_CHECKPOINT_UNREADABLE',
    `checkpoint file ${path} ${what}; move it away (mv ${path} ${path}.broken) and start Raven ` +
      `again: it then starts with no checkpoint, as on a first run (see "initial" in the config)`,
    { path, cause },
  );
}

/**
 * Open (or create) the checkpoint database at `path`, checked and at the current schema.
 *
 * @throws CheckpointError `ERR_CHECKPOINT_UNREADABLE` or `ERR_CHECKPOINT_SCHEMA`.
 */
export function openCheckpointDatabase(path: string): sqlite.Database {
  let db: sqlite.Database;
  try {
    db = new sqlite.Database(path);
  } catch (err) {
    throw new CheckpointError(
      'ERR_CHECKPOINT_UNREADABLE',
      `cannot open checkpoint file ${path}: ${(err as Error).message}; check that its directory exists and is writable`,
      { path, cause: err },
    );
  }
  try {
    prepare(db, path);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

function prepare(db: sqlite.Database, path: string): void {
  let tables: string[];
  try {
    db.exec('PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL');
    tables = db.all("SELECT name FROM sqlite_master WHERE type = 'table'").map((row) => row.name as string);
    // Reads every page once (about 80 ms for 10k objects): damage is found now, not mid-restart.
    const check = db.get('PRAGMA quick_check')?.quick_check as string | undefined;
    if (check !== 'ok') throw new Error(`integrity check: ${check ?? 'no answer'}`);
  } catch (err) {
    throw unreadable(path, `is not a readable SQLite database (${(err as Error).message})`, err);
  }
  if (tables.length === 0) {
    // One transaction, so a crash never leaves tables without a schema version.
    db.exec(
      `BEGIN; ${SCHEMA}; ${TRIGGERS}; INSERT INTO meta (name, value) VALUES ('schema_version', '${SCHEMA_VERSION}'); COMMIT`,
    );
    return;
  }
  const row = tables.includes('meta') ? db.get("SELECT value FROM meta WHERE name = 'schema_version'") : null;
  const version = Number(row?.value);
  if (!Number.isInteger(version) || version < 1) {
    throw unreadable(path, 'is an SQLite database but not a Raven checkpoint (no schema version)', undefined);
  }
  if (version > SCHEMA_VERSION) {
    throw new CheckpointError(
      'ERR_CHECKPOINT_SCHEMA',
      `checkpoint file ${path} has schema version ${version}, written by a newer Raven; this Raven ` +
        `knows versions up to ${SCHEMA_VERSION}. Run the newer Raven, or move the file away to start ` +
        `with no checkpoint.`,
      { path },
    );
  }
  for (let v = version; v < SCHEMA_VERSION; v++) {
    db.exec(
      `BEGIN; ${MIGRATIONS[v - 1] ?? ''}; UPDATE meta SET value = '${v + 1}' WHERE name = 'schema_version'; COMMIT`,
    );
  }
  db.exec(`BEGIN; ${TRIGGERS}; COMMIT`);
}
