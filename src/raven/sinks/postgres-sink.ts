/**
 * Writes change events (and gap notices) to PostgreSQL: an append-only log table, and optionally
 * a current-state table upserted by uid (schema in `postgres-statements.ts` and docs/sinks.md).
 * Raven creates the tables (`CREATE ... IF NOT EXISTS`) before its first write.
 *
 * Deliveries that arrive while earlier batches are written go together in one statement, one
 * transaction (`batch-writer.ts`), on a pool of `poolSize` connections. Writing a change twice is a
 * no-op: the log is unique on (sink, uid, resourceVersion, change type), so a retry or a restart's
 * replay adds nothing. Failures are classified by `isRetryablePostgresError`: a lost connection
 * or a server shutting down is retried; a refused statement (missing privilege, bad data) is not.
 * The connection string (it may hold a password) never appears in errors.
 */
import pg from 'pg';
import { isRetryablePostgresError } from '../../errors/classify.js';
import { ConfigError, SinkError } from '../../errors/raven-error.js';
import type { SinkRecord } from '../model/gap-notice.js';
import { BatchWriter } from './batch-writer.js';
import {
  PG_IDENTIFIER,
  changeRow,
  createSchemaStatement,
  createStatements,
  insertStatement,
  type ChangeRow,
  type PostgresTables,
} from './postgres-statements.js';
import type { Sink } from './sink.js';

export interface PostgresSinkOptions {
  name: string;
  /** `postgres://user:password@host:5432/db` (libpq URI; `?sslmode=require` etc. as pg reads them). */
  connectionString: string;
  /** Schema of the tables; default `public`. */
  schema?: string;
  /** The append-only log; default `raven_changes`. */
  table?: string;
  /** A table of each object's current state, upserted by uid; none by default. */
  currentStateTable?: string;
  /** Connections in the pool, and batches written at the same time; default 4. */
  poolSize?: number;
  /** Most changes per statement; default 500. */
  maxBatch?: number;
  /** For connecting and for each statement; default 10 000 ms. */
  timeoutMs?: number;
}

/**
 * @example
 * const sink = new PostgresSink({
 *   name: 'archive',
 *   connectionString: process.env.RAVEN_PG_URL ?? 'postgres://raven@127.0.0.1/raven',
 *   currentStateTable: 'raven_objects',
 * });
 */
export class PostgresSink implements Sink {
  readonly name: string;
  readonly #pool: pg.Pool;
  readonly #tables: PostgresTables;
  readonly #insert: string;
  readonly #writer: BatchWriter<ChangeRow>;
  #created: Promise<void> | undefined;

  constructor(options: PostgresSinkOptions) {
    const at = `sinks.${options.name}`;
    this.name = options.name;
    this.#tables = {
      schema: identifier(options.schema ?? 'public', `${at}.schema`),
      table: identifier(options.table ?? 'raven_changes', `${at}.table`),
      currentStateTable:
        options.currentStateTable === undefined
          ? undefined
          : identifier(options.currentStateTable, `${at}.currentStateTable`),
    };
    if (this.#tables.currentStateTable === this.#tables.table)
      throw new ConfigError('currentStateTable must differ from table', { path: `${at}.currentStateTable` });
    const timeoutMs = options.timeoutMs ?? 10_000;
    this.#pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? 4,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
      application_name: `raven-sink-${options.name}`,
    });
    // An idle connection the server closed (a restart): the pool drops it; the next write reconnects.
    this.#pool.on('error', () => undefined);
    this.#insert = insertStatement(this.#tables);
    this.#writer = new BatchWriter((rows) => this.#write(rows), {
      maxBatch: options.maxBatch ?? 500,
      maxInFlight: options.poolSize ?? 4,
    });
  }

  deliver(record: SinkRecord, signal: AbortSignal): Promise<void> {
    return this.#writer.submit(changeRow(this.name, record), signal);
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }

  async #write(rows: ChangeRow[]): Promise<void> {
    try {
      await this.#ensureTables();
      await this.#pool.query(this.#insert, [JSON.stringify(rows)]);
    } catch (err) {
      throw this.#sinkError(err, rows.length);
    }
  }

  /** Once per sink; a failure is forgotten so the next write tries again. */
  #ensureTables(): Promise<void> {
    this.#created ??= (async () => {
      const client = await this.#pool.connect();
      try {
        // Serialise creation across Ravens sharing a database: concurrent CREATE IF NOT EXISTS can collide.
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
          `raven:${this.#tables.schema}.${this.#tables.table}`,
        ]);
        const schema = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [
          this.#tables.schema,
        ]);
        if (schema.rowCount === 0) await client.query(createSchemaStatement(this.#tables));
        for (const statement of createStatements(this.#tables)) await client.query(statement);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    })().catch((err: unknown) => {
      this.#created = undefined;
      throw err;
    });
    return this.#created;
  }

  #sinkError(err: unknown, rows: number): SinkError {
    const e = err as { message?: unknown; code?: unknown };
    const message = typeof e.message === 'string' ? e.message : String(err);
    const code = typeof e.code === 'string' ? ` (${e.code})` : '';
    return new SinkError(
      `postgres sink "${this.name}": writing ${rows} change(s) failed: ${message}${code}`,
      {
        retryable: isRetryablePostgresError(err),
        cause: err,
      },
    );
  }
}

function identifier(value: string, path: string): string {
  if (!PG_IDENTIFIER.test(value))
    throw new ConfigError(
      `${JSON.stringify(value)} is not a table or schema name Raven can create; use 1 to 63 characters a-z, 0-9 and _, not starting with a digit`,
      { path },
    );
  return value;
}
