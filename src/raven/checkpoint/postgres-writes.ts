/**
 * Writing a buffer of checkpoint writes (`pending-writes.ts`) to the PostgreSQL tables: the SQL
 * of one write transaction, with every value inlined as a literal, so the whole transaction
 * travels in one message of the simple query protocol instead of one round trip per statement.
 * Rows travel as arrays (`unnest`), so a flush of 10,000 deliveries is as many statements as a
 * flush of one. A round trip costs a system call each way on both ends: at a sharded replica's
 * rate, where most writes carry one or two deliveries, it was most of the checkpoint's cost.
 *
 * A write is two messages (see {@link writeStatements}): the first takes the fence rows, writes
 * and reads back what the caller must decide on (is the fence still ours; which tombstones did
 * the new resourceVersion reach); the second deletes those tombstones and commits, or the
 * caller rolls back.
 *
 * Order, as in the SQLite store: replaced pairs are emptied first, then entries and tombstones
 * are written, then confirmed resourceVersions (a stored one never runs ahead of the entries it
 * confirms), then states no sink refers to are deleted, then the tombstones the resourceVersions
 * reach are dropped.
 */
import { toObjectKey } from '../../client/object-key.js';
import { tombstoneExpired } from './checkpoint-store.js';
import type { PendingWrites } from './pending-writes.js';

/**
 * A string as an SQL literal. The escape-string form (`E'…'`, quotes and backslashes doubled)
 * reads the same whatever the server's `standard_conforming_strings`.
 */
export function sqlText(value: string): string {
  return `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** Strings as an SQL `text[]`. */
function textArray(values: readonly string[]): string {
  return values.length === 0 ? `'{}'::text[]` : `ARRAY[${values.map(sqlText).join(',')}]::text[]`;
}

/** Whole numbers as an SQL `bigint[]`. */
function bigintArray(values: readonly number[]): string {
  for (const value of values)
    if (!Number.isSafeInteger(value)) throw new TypeError(`not a whole number for bigint: ${value}`);
  return values.length === 0 ? `'{}'::bigint[]` : `ARRAY[${values.join(',')}]::bigint[]`;
}

interface Columns {
  watcher: string[];
  sink: string[];
  key: string[];
  uid: string[];
  rv: string[];
  object: string[];
  /** Where the entry's stretch in scope started, `''` when unknown (stored as NULL). */
  since: string[];
}

const columns = (): Columns => ({ watcher: [], sink: [], key: [], uid: [], rv: [], object: [], since: [] });

/** The statements of one write transaction. */
export interface WriteStatements {
  /**
   * Sent first, after `BEGIN` and the caller's fence read: every write, then (when the batch
   * confirms resourceVersions) a `SELECT` of the tombstones of those watchers, last.
   */
  writes: string[];
  /** Whether the last of {@link writes} is that `SELECT`, to pass to {@link expiredTombstones}. */
  readsTombstones: boolean;
}

/** The SQL of writing `batch`; `s` is the quoted schema. */
export function writeStatements(s: string, batch: PendingWrites): WriteStatements {
  const out: string[] = [];
  const replaced = { watcher: [] as string[], sink: [] as string[] };
  const marked = { watcher: [] as string[], sink: [] as string[] };
  const puts = columns();
  const deletes = columns();
  for (const pair of batch.pairs.values()) {
    marked.watcher.push(pair.watcher);
    marked.sink.push(pair.sink);
    if (pair.replace) {
      replaced.watcher.push(pair.watcher);
      replaced.sink.push(pair.sink);
    }
    for (const [key, write] of pair.writes) {
      const into = 'deleted' in write ? deletes : puts;
      const what = 'deleted' in write ? write.deleted : write.entry;
      into.watcher.push(pair.watcher);
      into.sink.push(pair.sink);
      into.key.push(key);
      into.uid.push(what.uid ?? '');
      into.rv.push(what.resourceVersion ?? '');
      if ('entry' in write) {
        into.object.push(JSON.stringify(write.entry.object));
        into.since.push(write.entry.since ?? '');
      }
    }
  }
  const pairsOf = (p: typeof marked): string =>
    `unnest(${textArray(p.watcher)}, ${textArray(p.sink)}) AS p(watcher, sink)`;
  if (replaced.watcher.length > 0) {
    for (const table of ['delivered', 'tombstones'])
      out.push(
        `DELETE FROM ${s}.${table} t USING ${pairsOf(replaced)} WHERE t.watcher = p.watcher AND t.sink = p.sink`,
      );
  }
  if (marked.watcher.length > 0)
    out.push(
      `INSERT INTO ${s}.checkpoints (watcher, sink) SELECT * FROM ${pairsOf(marked)} ON CONFLICT DO NOTHING`,
    );
  if (puts.key.length > 0) out.push(...entryStatements(s, puts));
  if (deletes.key.length > 0) out.push(...tombstoneStatements(s, deletes));
  if (batch.forgotten.size > 0)
    out.push(`DELETE FROM ${s}.watchers WHERE watcher = ANY(${textArray([...batch.forgotten])})`);
  const watchers = [...batch.versions.keys()];
  if (watchers.length > 0) {
    const confirmed = [...batch.versions.values()];
    out.push(
      `INSERT INTO ${s}.watchers (watcher, resource_version, scope, sinks, confirmed_at)
       SELECT * FROM unnest(${textArray(watchers)}, ${textArray(confirmed.map((c) => c.resourceVersion))},
         ${textArray(confirmed.map((c) => c.scope))}, ${textArray(confirmed.map((c) => JSON.stringify(c.sinks)))},
         ${bigintArray(confirmed.map((c) => c.at))})
       ON CONFLICT (watcher) DO UPDATE SET resource_version = EXCLUDED.resource_version,
         scope = EXCLUDED.scope, sinks = EXCLUDED.sinks, confirmed_at = EXCLUDED.confirmed_at`,
    );
  }
  out.push(
    `DELETE FROM ${s}.states st WHERE st.watcher = ANY(${textArray(batch.watchers())})
        AND NOT EXISTS (SELECT 1 FROM ${s}.delivered d WHERE d.state = st.id)`,
  );
  // Which tombstones a resourceVersion reaches is decided by the one ordering function, here.
  if (watchers.length > 0)
    out.push(
      `SELECT watcher, sink, key, resource_version FROM ${s}.tombstones WHERE watcher = ANY(${textArray(watchers)})`,
    );
  return { writes: out, readsTombstones: watchers.length > 0 };
}

/** A stored tombstone, as the `SELECT` of {@link writeStatements} reads it. */
export interface TombstoneRow {
  watcher: string;
  sink: string;
  key: string;
  resource_version: string;
}

/**
 * The statement deleting the tombstones among `rows` that the batch's confirmed resourceVersions
 * reach (undefined: none).
 */
export function expiredTombstones(
  s: string,
  batch: PendingWrites,
  rows: readonly TombstoneRow[],
): string | undefined {
  const gone = rows.filter((row) =>
    tombstoneExpired(
      { key: toObjectKey(row.key), uid: undefined, resourceVersion: row.resource_version || undefined },
      batch.versions.get(row.watcher)?.resourceVersion ?? '',
    ),
  );
  if (gone.length === 0) return undefined;
  return `DELETE FROM ${s}.tombstones t
      USING unnest(${textArray(gone.map((r) => r.watcher))}, ${textArray(gone.map((r) => r.sink))},
        ${textArray(gone.map((r) => r.key))}) AS u(watcher, sink, key)
      WHERE t.watcher = u.watcher AND t.sink = u.sink AND t.key = u.key`;
}

function entryStatements(s: string, puts: Columns): string[] {
  const rows = `unnest(${textArray(puts.watcher)}, ${textArray(puts.sink)}, ${textArray(puts.key)},
    ${textArray(puts.uid)}, ${textArray(puts.rv)})`;
  return [
    `INSERT INTO ${s}.states (watcher, key, uid, resource_version, object)
     SELECT watcher, key, uid, rv, object
       FROM unnest(${textArray(puts.watcher)}, ${textArray(puts.key)}, ${textArray(puts.uid)},
         ${textArray(puts.rv)}, ${textArray(puts.object)}) AS u(watcher, key, uid, rv, object)
     ON CONFLICT DO NOTHING`,
    `INSERT INTO ${s}.delivered (watcher, sink, key, state, since)
     SELECT u.watcher, u.sink, u.key, st.id, NULLIF(u.since, '')
       FROM unnest(${textArray(puts.watcher)}, ${textArray(puts.sink)}, ${textArray(puts.key)},
         ${textArray(puts.uid)}, ${textArray(puts.rv)}, ${textArray(puts.since)}) AS u(watcher, sink, key, uid, rv, since)
       JOIN ${s}.states st
         ON st.watcher = u.watcher AND st.key = u.key AND st.uid = u.uid AND st.resource_version = u.rv
     ON CONFLICT (watcher, sink, key) DO UPDATE SET state = EXCLUDED.state, since = EXCLUDED.since`,
    `DELETE FROM ${s}.tombstones t USING ${rows} AS u(watcher, sink, key, uid, rv)
      WHERE t.watcher = u.watcher AND t.sink = u.sink AND t.key = u.key`,
  ];
}

function tombstoneStatements(s: string, deletes: Columns): string[] {
  const rows = `unnest(${textArray(deletes.watcher)}, ${textArray(deletes.sink)}, ${textArray(deletes.key)},
    ${textArray(deletes.uid)}, ${textArray(deletes.rv)})`;
  return [
    `DELETE FROM ${s}.delivered d
      USING unnest(${textArray(deletes.watcher)}, ${textArray(deletes.sink)}, ${textArray(deletes.key)}) AS u(watcher, sink, key)
      WHERE d.watcher = u.watcher AND d.sink = u.sink AND d.key = u.key`,
    `INSERT INTO ${s}.tombstones (watcher, sink, key, uid, resource_version)
     SELECT * FROM ${rows}
     ON CONFLICT (watcher, sink, key) DO UPDATE SET uid = EXCLUDED.uid, resource_version = EXCLUDED.resource_version`,
  ];
}
