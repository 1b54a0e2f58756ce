/**
 * The PostgreSQL sink's tables and its one write statement. The schema is documented in
 * docs/sinks.md (postgres); a change here is a change there.
 *
 * - `<table>` (default `raven_changes`): append-only, one row per change or gap notice, `seq`
 *   in insertion order. A change is unique on (sink, uid, resource_version, change_type): the
 *   change type is part of the key because a deletion Raven inferred (a tombstone) carries the
 *   object's last resourceVersion, the same as the change before it. A gap notice has no uid and
 *   is unique on (sink, event_id).
 * - `<currentStateTable>` (optional): one row per live object and sink, upserted by uid; a
 *   deletion removes the row. Only changes newly added to the log touch it, so a change delivered
 *   again after a restart cannot set an object back to an older state.
 *
 * Every batch is one statement (data-modifying CTEs), so one transaction: all rows or none.
 */
import type { SinkRecord } from '../model/gap-notice.js';

/** A PostgreSQL identifier Raven creates: lower case, so it never needs quoting rules beyond quotes. */
export const PG_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

export interface PostgresTables {
  schema: string;
  table: string;
  currentStateTable: string | undefined;
}

const q = (id: string): string => `"${id}"`;

/**
 * `CREATE ... IF NOT EXISTS` for the tables and indexes, in order. The schema is created apart
 * ({@link createSchemaStatement}), only when missing: `CREATE SCHEMA IF NOT EXISTS` needs the
 * CREATE privilege on the database even when the schema exists.
 */
export function createStatements(t: PostgresTables): string[] {
  const log = `${q(t.schema)}.${q(t.table)}`;
  const out = [
    `CREATE TABLE IF NOT EXISTS ${log} (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sink text NOT NULL,
  event_id text NOT NULL,
  watcher text NOT NULL,
  change_type text NOT NULL,
  origin text,
  api_group text NOT NULL,
  api_version text NOT NULL,
  resource text NOT NULL,
  kind text NOT NULL,
  namespace text,
  name text,
  uid text,
  resource_version text,
  tombstone boolean NOT NULL DEFAULT false,
  event_time timestamptz NOT NULL,
  inserted_at timestamptz NOT NULL DEFAULT now(),
  record jsonb NOT NULL
)`,
    `CREATE UNIQUE INDEX IF NOT EXISTS ${q(`${t.table}_change_key`)} ON ${log} (sink, uid, resource_version, change_type) WHERE change_type <> 'gap'`,
    `CREATE UNIQUE INDEX IF NOT EXISTS ${q(`${t.table}_gap_key`)} ON ${log} (sink, event_id) WHERE change_type = 'gap'`,
  ];
  if (t.currentStateTable !== undefined) {
    out.push(`CREATE TABLE IF NOT EXISTS ${q(t.schema)}.${q(t.currentStateTable)} (
  sink text NOT NULL,
  uid text NOT NULL,
  watcher text NOT NULL,
  api_group text NOT NULL,
  api_version text NOT NULL,
  resource text NOT NULL,
  kind text NOT NULL,
  namespace text,
  name text NOT NULL,
  resource_version text,
  object jsonb NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (sink, uid)
)`);
  }
  return out;
}

export function createSchemaStatement(t: PostgresTables): string {
  return `CREATE SCHEMA IF NOT EXISTS ${q(t.schema)}`;
}

/** One row of the batch, as the statement's JSON parameter carries it. */
export interface ChangeRow {
  sink: string;
  event_id: string;
  watcher: string;
  change_type: string;
  origin: string | null;
  api_group: string;
  api_version: string;
  resource: string;
  kind: string;
  namespace: string | null;
  name: string | null;
  uid: string | null;
  resource_version: string | null;
  tombstone: boolean;
  event_time: string;
  record: SinkRecord;
}

export function changeRow(sink: string, record: SinkRecord): ChangeRow {
  const common = {
    sink,
    event_id: record.id,
    watcher: record.watcher,
    change_type: record.type,
    api_group: record.resource.group,
    api_version: record.resource.version,
    resource: record.resource.resource,
    kind: record.resource.kind,
    namespace: record.namespace ?? null,
    event_time: record.time,
    record,
  };
  if (record.type === 'gap')
    return { ...common, origin: null, name: null, uid: null, resource_version: null, tombstone: false };
  return {
    ...common,
    origin: record.origin,
    name: record.name,
    uid: record.uid ?? null,
    resource_version: record.resourceVersion ?? null,
    tombstone: record.tombstone,
  };
}

const COLUMNS =
  'sink, event_id, watcher, change_type, origin, api_group, api_version, resource, kind, namespace, name, uid, resource_version, tombstone, event_time, record';

/**
 * The batch statement: `$1` is a JSON array of {@link ChangeRow}s. Rows already in the log are
 * skipped (ON CONFLICT DO NOTHING); the current-state table follows only the rows just added.
 * The array is read as `jsonb`, so each change's `record` is parsed once (as `json` it would be
 * parsed for the recordset and again into the jsonb column).
 */
export function insertStatement(t: PostgresTables): string {
  const log = `${q(t.schema)}.${q(t.table)}`;
  const input = `input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(
    sink text, event_id text, watcher text, change_type text, origin text, api_group text,
    api_version text, resource text, kind text, namespace text, name text, uid text,
    resource_version text, tombstone boolean, event_time timestamptz, record jsonb))`;
  const added = (returning: string): string => `added AS (
  INSERT INTO ${log} (${COLUMNS}) SELECT ${COLUMNS} FROM input
  ON CONFLICT DO NOTHING RETURNING ${returning})`;
  // Without a current-state table only the count is read: returning the rows (each with its
  // record) would copy every change once more into the statement's working memory.
  if (t.currentStateTable === undefined)
    return `WITH ${input}, ${added('1')} SELECT count(*)::int AS added FROM added`;
  const state = `${q(t.schema)}.${q(t.currentStateTable)}`;
  const upserted = `upserted AS (
  INSERT INTO ${state} AS s (sink, uid, watcher, api_group, api_version, resource, kind, namespace, name, resource_version, object, updated_at)
  SELECT sink, uid, watcher, api_group, api_version, resource, kind, namespace, name, resource_version, record->'object', event_time
  FROM added WHERE change_type IN ('added', 'modified') AND uid IS NOT NULL
  ON CONFLICT (sink, uid) DO UPDATE SET
    watcher = excluded.watcher, namespace = excluded.namespace, name = excluded.name,
    resource_version = excluded.resource_version, object = excluded.object, updated_at = excluded.updated_at
  RETURNING 1)`;
  const removed = `removed AS (
  DELETE FROM ${state} AS s USING added a
  WHERE a.change_type = 'deleted' AND s.sink = a.sink AND s.uid = a.uid
  RETURNING 1)`;
  return `WITH ${input}, ${added(COLUMNS)}, ${upserted}, ${removed}
SELECT (SELECT count(*) FROM added)::int AS added, (SELECT count(*) FROM upserted)::int AS upserted, (SELECT count(*) FROM removed)::int AS removed`;
}
