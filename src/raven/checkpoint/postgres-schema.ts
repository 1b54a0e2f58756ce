/**
 * The PostgreSQL checkpoint's tables, in a schema of their own (default `raven`), and creating
 * them safely: replicas starting together create them once (an advisory lock serialises them),
 * and a schema a newer Raven wrote is refused, never changed.
 *
 * The tables mirror the SQLite file's (`sqlite-schema.ts`), plus `fence`: per fence name, the
 * epoch and holder allowed to write. Every write transaction reads that row `FOR SHARE` and
 * gives up unless it still holds it; a replica taking over raises the epoch, which waits for a
 * write in flight to commit and refuses every later one of the deposed holder.
 */
import type pg from 'pg';
import { CheckpointError } from './checkpoint-error.js';

/** Bump when the tables change, and add the step from the previous version to `MIGRATIONS`. */
export const PG_SCHEMA_VERSION = 2;

/** A schema name Raven creates: plain lower-case, so it never needs escaping beyond quotes. */
export const PG_SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The statements that create the current version; `s` is the quoted schema name. `delivered.since`
 * (version 2): the resourceVersion at which the entry's incarnation entered the watcher's scope,
 * NULL when unknown (rows written before version 2).
 */
function tables(s: string): string {
  return `
CREATE TABLE ${s}.meta (name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE ${s}.fence (
  name text PRIMARY KEY,
  epoch bigint NOT NULL,
  holder text NOT NULL,
  acquired_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE ${s}.checkpoints (watcher text NOT NULL, sink text NOT NULL, PRIMARY KEY (watcher, sink));
CREATE TABLE ${s}.states (
  id bigserial PRIMARY KEY,
  watcher text NOT NULL,
  key text NOT NULL,
  uid text NOT NULL,
  resource_version text NOT NULL,
  object text NOT NULL,
  UNIQUE (watcher, key, uid, resource_version)
);
CREATE TABLE ${s}.delivered (
  watcher text NOT NULL,
  sink text NOT NULL,
  key text NOT NULL,
  state bigint NOT NULL REFERENCES ${s}.states (id),
  since text,
  PRIMARY KEY (watcher, sink, key)
);
CREATE INDEX delivered_by_state ON ${s}.delivered (state);
CREATE TABLE ${s}.tombstones (
  watcher text NOT NULL,
  sink text NOT NULL,
  key text NOT NULL,
  uid text NOT NULL,
  resource_version text NOT NULL,
  PRIMARY KEY (watcher, sink, key)
);
CREATE TABLE ${s}.watchers (
  watcher text PRIMARY KEY,
  resource_version text NOT NULL,
  scope text NOT NULL,
  sinks text NOT NULL,
  confirmed_at bigint NOT NULL
);
INSERT INTO ${s}.meta (name, value) VALUES ('schema_version', '${PG_SCHEMA_VERSION}');
`;
}

/** Steps from version i+1 to i+2; `s` is the quoted schema name. */
const MIGRATIONS: readonly ((s: string) => string)[] = [
  // 1 → 2: where each entry's stretch in scope started, which names its deletion (NULL: unknown).
  (s) => `ALTER TABLE ${s}.delivered ADD COLUMN since text`,
];

export const quoteSchema = (schema: string): string => `"${schema}"`;

/**
 * Create the schema's tables if it has none, check its version otherwise.
 *
 * @throws CheckpointError `ERR_CHECKPOINT_SCHEMA` (newer Raven) or `ERR_CHECKPOINT_UNREADABLE`.
 */
export async function preparePostgresSchema(client: pg.ClientBase, schema: string): Promise<void> {
  const where = `postgres:${schema}`;
  const s = quoteSchema(schema);
  await client.query('BEGIN');
  try {
    // Serialises replicas creating the tables at the same start (CREATE IF NOT EXISTS races).
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`kube-raven checkpoint ${schema}`]);
    const found = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'meta'`,
      [schema],
    );
    if (found.rows[0]?.n === '0') {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await client.query(tables(s));
    } else {
      const row = await client.query<{ value: string }>(
        `SELECT value FROM ${s}.meta WHERE name = 'schema_version'`,
      );
      const version = Number(row.rows[0]?.value);
      if (!Number.isInteger(version) || version < 1) {
        throw new CheckpointError(
          'ERR_CHECKPOINT_UNREADABLE',
          `PostgreSQL schema ${schema} has a meta table but no Raven schema version; give the checkpoint another schema (checkpoint.schema)`,
          { path: where },
        );
      }
      if (version > PG_SCHEMA_VERSION) {
        throw new CheckpointError(
          'ERR_CHECKPOINT_SCHEMA',
          `PostgreSQL schema ${schema} holds checkpoint schema version ${version}, written by a newer Raven; this Raven knows versions up to ${PG_SCHEMA_VERSION}. Run the newer Raven, or use another schema to start with no checkpoint.`,
          { path: where },
        );
      }
      // Under the advisory lock, in this transaction: replicas starting together migrate once.
      for (let v = version; v < PG_SCHEMA_VERSION; v++) {
        await client.query(MIGRATIONS[v - 1]?.(s) ?? '');
        await client.query(`UPDATE ${s}.meta SET value = $1 WHERE name = 'schema_version'`, [String(v + 1)]);
      }
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
