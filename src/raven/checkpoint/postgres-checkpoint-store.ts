/**
 * A checkpoint store in PostgreSQL, shared by the replicas of one Raven deployment: whichever
 * replica leads continues exactly where the previous one stopped.
 *
 * Opening takes the **fence**: it records this replica's epoch (with leader election, the Lease's
 * `leaseTransitions` when this replica acquired it) as the one allowed to write, and refuses to
 * open if a newer epoch holds it. Every flush is one transaction that first reads the fence
 * `FOR SHARE` and commits nothing unless this replica still holds it: a replica that lost its
 * lease and was replaced cannot record deliveries any more (`ERR_CHECKPOINT_FENCED`), even if it
 * does not know yet that it lost. A takeover waits for a flush in flight to commit, then reads
 * everything, so the new leader sees every write the old one made.
 *
 * Reads are answered from memory: the whole checkpoint is read when the store opens (the replica
 * is then the only writer) and every write is applied to that copy at once. Writes are buffered
 * and written every `flushIntervalMs` (or by group commit), on `flush()` and on `close()`;
 * `recordBaseline` and `forgetConfirmedVersion` are sent at once. A failed flush keeps its
 * writes and is retried at the next interval; a fenced one is not retried.
 */
import { hostname } from 'node:os';
import pg from 'pg';
import type { KubeObject } from '../../client/kube-object.js';
import { toObjectKey, type ObjectKey } from '../../client/object-key.js';
import { systemClock, type Clock, type TimerHandle } from '../../util/clock.js';
import { silentLogger, type Logger } from '../../util/logger.js';
import type { ChangeEvent } from '../model/change-event.js';
import { RavenError } from '../../errors/raven-error.js';
import { CheckpointError } from './checkpoint-error.js';
import {
  entryFromEvent,
  entryFromObject,
  type CheckpointEntry,
  type CheckpointStats,
  type CheckpointStore,
  type CheckpointTombstone,
  type ConfirmedState,
  type ConfirmedVersion,
  type InScopeSince,
} from './checkpoint-store.js';
import { MemoryCheckpointStore } from './memory-checkpoint-store.js';
import { PendingWrites } from './pending-writes.js';
import { PG_SCHEMA_NAME, preparePostgresSchema, quoteSchema } from './postgres-schema.js';
import { expiredTombstones, sqlText, writeStatements, type TombstoneRow } from './postgres-writes.js';

export interface PostgresCheckpointStoreOptions {
  /** `postgres://user:password@host:5432/db`; never shown in errors or logs. */
  url: string;
  /** The schema holding the tables (created if missing); one per Raven deployment. Default `raven`. */
  schema?: string;
  /** Who writes: the leader-election identity. Default `<hostname>-<pid>`. */
  holder?: string;
  /**
   * This writer's epoch: with leader election, the Lease's `leaseTransitions` when this replica
   * acquired it, so a replica that acquired the lease earlier can never take the fence back.
   * Omitted: one more than the stored epoch (the last replica to open writes).
   */
  epoch?: number;
  /**
   * Which fence to take: several fences may share a schema. Default `default`. Several names: a
   * writer that owns several parts of the work (a sharded replica, one fence per part of the hash
   * space) takes each, one more than its stored epoch (`epoch` must then be omitted), and every
   * write checks them all, so losing any one of them stops its writes.
   */
  fence?: string | readonly string[];
  clock?: Clock;
  logger?: Logger;
  /**
   * How long a delivery may wait before its checkpoint is written; default
   * {@link PG_FLUSH_INTERVAL_MS} (100 ms). 0: group commit, each write sent as soon as the one
   * before it committed, carrying everything recorded meanwhile.
   */
  flushIntervalMs?: number;
  /** For connecting and for each statement. Default 10 000 ms. */
  timeoutMs?: number;
  /** Called once when a write is refused because another replica took the fence. */
  onFenced?: (error: CheckpointError) => void;
}

/**
 * After a failed write, the next one waits this long (or the flush interval, if longer): a server
 * that is down is asked once a second, not once per recorded delivery.
 */
const RETRY_MS = 1000;

/**
 * How long a confirmed delivery may wait, by default, before its checkpoint is written: a replica
 * then sends at most ten write transactions a second however many changes it delivers, and a
 * crash makes the next replica deliver again at most the last tenth of a second of them (with
 * their event ids, so a receiver that remembers ids processes each once). Writing each delivery
 * as soon as the write before it committed (0) costs a transaction per change at a sharded
 * replica's rate: measured, a third more CPU per change, and as many commits on the server.
 */
export const PG_FLUSH_INTERVAL_MS = 100;

interface Fence {
  name: string;
  epoch: number;
  holder: string;
}

/** A row of the fence table, as PostgreSQL returns it. */
interface FenceRow {
  name: string;
  epoch: string;
  holder: string;
}

/**
 * @example
 * const store = await PostgresCheckpointStore.open({
 *   url: process.env.RAVEN_CHECKPOINT_URL ?? 'postgres://raven@127.0.0.1/raven',
 *   holder: 'raven-0',
 *   epoch: 3,
 * });
 * store.recordDelivered(event, 'audit-log');
 * await store.close();
 */
export class PostgresCheckpointStore implements CheckpointStore {
  /** `postgres:<schema>`, as errors name it. */
  readonly path: string;
  readonly schema: string;
  /** The first of {@link PostgresCheckpointStore.fences}. */
  readonly fence: Readonly<Fence>;
  /** Every fence this writer holds, sorted by name. */
  readonly fences: readonly Readonly<Fence>[];
  readonly #pool: pg.Pool;
  readonly #view: MemoryCheckpointStore;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #flushIntervalMs: number;
  readonly #onFenced: ((error: CheckpointError) => void) | undefined;
  #pending = new PendingWrites();
  /** What a failed write took, written again before anything newer. */
  #retry: PendingWrites | undefined;
  /** Writes go one at a time, in order. */
  #writing: Promise<void> = Promise.resolve();
  #timer: TimerHandle | undefined;
  #closed = false;
  #fenced: CheckpointError | undefined;
  /** With group commit: a write is queued behind the one in flight. */
  #queued = false;
  /** The last write failed: the next one waits {@link RETRY_MS} instead of going at once. */
  #failing = false;
  /** {@link PostgresCheckpointStore.#fenceRead}'s statement: the fences never change once open. */
  #fenceSql: string | undefined;

  private constructor(
    pool: pg.Pool,
    view: MemoryCheckpointStore,
    fences: readonly Fence[],
    options: PostgresCheckpointStoreOptions & { schema: string },
  ) {
    this.schema = options.schema;
    this.path = `postgres:${options.schema}`;
    this.fences = fences;
    this.fence = fences[0] as Fence;
    this.#pool = pool;
    this.#view = view;
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? silentLogger;
    this.#flushIntervalMs = options.flushIntervalMs ?? PG_FLUSH_INTERVAL_MS;
    this.#onFenced = options.onFenced;
  }

  /**
   * Connect, create the tables if missing, take the fence and read the whole checkpoint.
   *
   * @throws CheckpointError `ERR_CHECKPOINT_FENCED` (a newer epoch holds the fence),
   *   `ERR_CHECKPOINT_UNREADABLE` (cannot connect or read) or `ERR_CHECKPOINT_SCHEMA`.
   */
  static async open(options: PostgresCheckpointStoreOptions): Promise<PostgresCheckpointStore> {
    const schema = options.schema ?? 'raven';
    if (!PG_SCHEMA_NAME.test(schema))
      throw new CheckpointError(
        'ERR_CHECKPOINT_UNREADABLE',
        `checkpoint schema ${JSON.stringify(schema)} is not a plain name: use 1 to 63 characters a-z, 0-9 and _, not starting with a digit`,
      );
    const timeoutMs = options.timeoutMs ?? 10_000;
    const pool = new pg.Pool({
      connectionString: options.url,
      max: 1,
      connectionTimeoutMillis: timeoutMs,
      statement_timeout: timeoutMs,
    });
    // A connection dropped while idle is replaced at the next write; the write reports the failure.
    pool.on('error', () => undefined);
    const names = typeof options.fence === 'string' ? [options.fence] : [...(options.fence ?? ['default'])];
    if (names.length === 0 || (names.length > 1 && options.epoch !== undefined))
      throw new RavenError(
        'ERR_INVALID_ARGUMENT',
        names.length === 0
          ? 'fence: expected a fence name or a non-empty list of them, got []'
          : 'fence: several fences take the next epoch of each; omit epoch',
      );
    // Sorted: replicas taking overlapping fences lock their rows in the same order.
    const holder = options.holder ?? `${hostname()}-${process.pid}`;
    const fences: Fence[] = [...new Set(names)]
      .sort()
      .map((name) => ({ name, epoch: options.epoch ?? -1, holder }));
    try {
      const client = await pool.connect();
      try {
        await preparePostgresSchema(client, schema);
        const view = new MemoryCheckpointStore();
        await client.query('BEGIN');
        try {
          for (const fence of fences)
            fence.epoch = await takeFence(client, schema, fence, options.epoch === undefined);
          await load(client, quoteSchema(schema), view);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
        return new PostgresCheckpointStore(pool, view, fences, { ...options, schema });
      } finally {
        client.release();
      }
    } catch (err) {
      await pool.end().catch(() => undefined);
      if (err instanceof CheckpointError) throw err;
      throw new CheckpointError(
        'ERR_CHECKPOINT_UNREADABLE',
        `cannot open the PostgreSQL checkpoint (schema ${schema}): ${(err as Error).message}; check checkpoint.url and that the server is reachable`,
        { path: `postgres:${schema}`, cause: err },
      );
    }
  }

  recordDelivered(event: ChangeEvent, sink: string): void {
    this.#view.recordDelivered(event, sink);
    const entry = entryFromEvent(event);
    this.#pending.write(
      event.watcher,
      sink,
      entry.key,
      event.type === 'deleted'
        ? { deleted: { key: entry.key, uid: entry.uid, resourceVersion: entry.resourceVersion } }
        : { entry },
    );
    this.#schedule();
  }

  recordBaseline(watcher: string, sink: string, objects: Iterable<KubeObject>, since?: InScopeSince): void {
    const entries = [...objects].map((object) => entryFromObject(object, since?.(object)));
    this.#view.recordBaseline(
      watcher,
      sink,
      entries.map((e) => e.object),
      since,
    );
    this.#pending.baseline(watcher, sink, entries);
    this.#sendNow();
  }

  entries(watcher: string, sink: string): CheckpointEntry[] {
    this.#assertOpen();
    return this.#view.entries(watcher, sink);
  }

  tombstones(watcher: string, sink: string): CheckpointTombstone[] {
    this.#assertOpen();
    return this.#view.tombstones(watcher, sink);
  }

  confirmed(watcher: string, sink: string, key: ObjectKey): ConfirmedState | undefined {
    this.#assertOpen();
    return this.#view.confirmed(watcher, sink, key);
  }

  hasCheckpoint(watcher: string, sink: string): boolean {
    this.#assertOpen();
    return this.#view.hasCheckpoint(watcher, sink);
  }

  recordConfirmedVersion(watcher: string, confirmed: ConfirmedVersion): void {
    this.#view.recordConfirmedVersion(watcher, confirmed);
    this.#pending.confirm(watcher, confirmed);
    this.#schedule();
  }

  confirmedVersion(watcher: string): ConfirmedVersion | undefined {
    this.#assertOpen();
    return this.#view.confirmedVersion(watcher);
  }

  forgetConfirmedVersion(watcher: string): void {
    this.#view.forgetConfirmedVersion(watcher);
    this.#pending.forget(watcher);
    this.#sendNow();
  }

  /** What this replica's copy holds (the same as the tables once flushed). */
  stats(): CheckpointStats {
    return this.#view.stats();
  }

  /** Counts in the tables; buffered writes count once flushed. */
  async storedStats(): Promise<CheckpointStats> {
    this.#assertOpen();
    const s = quoteSchema(this.schema);
    const { rows } = await this.#pool.query<{ checkpoints: string; entries: string; states: string }>(
      `SELECT (SELECT count(*) FROM ${s}.checkpoints) AS checkpoints,
              (SELECT count(*) FROM ${s}.delivered) AS entries,
              (SELECT count(*) FROM ${s}.states) AS states`,
    );
    const row = rows[0];
    return {
      checkpoints: Number(row?.checkpoints),
      entries: Number(row?.entries),
      states: Number(row?.states),
    };
  }

  async flush(): Promise<void> {
    this.#assertOpen();
    await this.#send();
  }

  /** Resolves once every write sent so far was answered (committed, refused or failed). */
  idle(): Promise<void> {
    return this.#writing;
  }

  /**
   * Flush and disconnect. If the last flush fails the connection is closed all the same and the
   * error is thrown: those deliveries are then redelivered by the next leader, as after a crash.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#send();
    } finally {
      this.destroy();
    }
  }

  /**
   * Stop now: drop buffered writes (as a crash would) and disconnect once the write in flight,
   * if any, is answered.
   */
  destroy(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#view.destroy();
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending = new PendingWrites();
    this.#retry = undefined;
    const pool = this.#pool;
    void this.#writing.then(() => pool.end()).catch(() => undefined);
  }

  #schedule(
    delayMs = this.#failing ? Math.max(this.#flushIntervalMs, RETRY_MS) : this.#flushIntervalMs,
  ): void {
    if (delayMs === 0) {
      // Group commit: the write goes as soon as the one in flight committed, with everything
      // recorded meanwhile, so a busy leader still sends one transaction at a time.
      if (this.#queued) return;
      this.#queued = true;
      void this.#writing.then(() => {
        this.#queued = false;
        if (!this.#closed) this.#sendNow();
      });
      return;
    }
    this.#timer ??= this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.#sendNow();
    }, delayMs);
  }

  /** Send what is buffered without waiting for the timer; a failure is logged and retried. */
  #sendNow(): void {
    this.#send().catch((err: unknown) => {
      if (err instanceof CheckpointError && err.code === 'ERR_CHECKPOINT_FENCED') return;
      this.#logger.error(
        { err, checkpoint: this.path, retryInMs: Math.max(this.#flushIntervalMs, RETRY_MS) },
        'checkpoint write failed; retrying',
      );
      if (!this.#closed) this.#schedule();
    });
  }

  /**
   * Take the whole buffer now (later records go to a new one) and write it behind the writes
   * already queued, so writes reach the server in the order they were recorded.
   */
  #send(): Promise<void> {
    const batch = this.#pending;
    this.#pending = new PendingWrites();
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    const next = this.#writing.then(() => this.#write(batch));
    this.#writing = next.catch(() => undefined);
    return next;
  }

  async #write(taken: PendingWrites): Promise<void> {
    if (this.#fenced !== undefined) throw this.#fenced;
    let batch = taken;
    // What a failed write took goes first, with the newer writes on top.
    if (this.#retry !== undefined) {
      this.#retry.absorb(batch);
      batch = this.#retry;
      this.#retry = undefined;
    }
    if (batch.empty) return;
    let client: pg.PoolClient | undefined;
    try {
      client = await this.#pool.connect();
      const s = quoteSchema(this.schema);
      const { writes, readsTombstones } = writeStatements(s, batch);
      // One message: the fence rows (FOR SHARE, before anything is written), then every write.
      const results = (await client.query(
        ['BEGIN', this.#fenceRead(s), ...writes].join(';\n'),
      )) as unknown as pg.QueryResult[];
      await this.#checkFence(client, s, Number((results[1]?.rows[0] as { held: string } | undefined)?.held));
      const expired = readsTombstones
        ? expiredTombstones(s, batch, results.at(-1)?.rows as TombstoneRow[])
        : undefined;
      await client.query(expired === undefined ? 'COMMIT' : `${expired};\nCOMMIT`);
      client.release();
      this.#failing = false;
    } catch (err) {
      if (client !== undefined) {
        await client.query('ROLLBACK').catch(() => undefined);
        client.release(true);
      }
      if (err instanceof CheckpointError && err.code === 'ERR_CHECKPOINT_FENCED') {
        this.#fenced = err;
        this.#logger.error({ checkpoint: this.path, holder: this.fence.holder }, err.message);
        this.#onFenced?.(err);
        throw err;
      }
      if (!this.#closed) this.#retry = batch;
      this.#failing = true;
      throw new CheckpointError(
        'ERR_CHECKPOINT_WRITE',
        `cannot write the PostgreSQL checkpoint (schema ${this.schema}): ${(err as Error).message}`,
        { path: this.path, cause: err },
      );
    }
  }

  /**
   * The statement locking this writer's fence rows `FOR SHARE`, in name order, where they still
   * hold its epoch and name it, and counting them: one number comes back, whatever the number of
   * fences (a sharded replica has one per part it owns).
   */
  #fenceRead(s: string): string {
    if (this.#fenceSql !== undefined) return this.#fenceSql;
    const names = this.fences.map((f) => sqlText(f.name)).join(',');
    const epochs = this.fences.map((f) => f.epoch).join(',');
    return (this.#fenceSql = `SELECT count(*) AS held FROM (
      SELECT 1 FROM ${s}.fence f JOIN unnest(ARRAY[${names}]::text[], ARRAY[${epochs}]::bigint[]) AS u(name, epoch)
        ON f.name = u.name AND f.epoch = u.epoch
       WHERE f.holder = ${sqlText(this.fence.holder)}
       ORDER BY f.name FOR SHARE OF f) held`);
  }

  /**
   * Throws `ERR_CHECKPOINT_FENCED`, naming a fence taken and who holds it now, unless `held` (from
   * the fence read) counts every fence of this writer.
   */
  async #checkFence(client: pg.ClientBase, s: string, held: number): Promise<void> {
    if (held === this.fences.length) return;
    const { rows } = await client.query<FenceRow>(
      `SELECT name, epoch, holder FROM ${s}.fence WHERE name = ANY($1::text[])`,
      [this.fences.map((f) => f.name)],
    );
    const stored = new Map(rows.map((row) => [row.name, row]));
    for (const fence of this.fences) {
      const row = stored.get(fence.name);
      if (row === undefined || Number(row.epoch) !== fence.epoch || row.holder !== fence.holder)
        throw fencedError(this.path, fence, row);
    }
    throw fencedError(this.path, this.fence, undefined);
  }

  #assertOpen(): void {
    if (this.#closed) {
      throw new CheckpointError(
        'ERR_CHECKPOINT_CLOSED',
        `the PostgreSQL checkpoint (schema ${this.schema}) is closed`,
        {
          path: this.path,
        },
      );
    }
  }
}

function fencedError(
  path: string,
  fence: Fence,
  row: { epoch: string; holder: string } | undefined,
): CheckpointError {
  const now = row === undefined ? 'nobody' : `${row.holder} at epoch ${row.epoch}`;
  return new CheckpointError(
    'ERR_CHECKPOINT_FENCED',
    `the checkpoint (${path}, fence ${fence.name}) is held by ${now}; ${fence.holder} at epoch ${fence.epoch} may not write it any more (another replica took over)`,
    { path },
  );
}

/** Record this writer in the fence row; returns its epoch. */
async function takeFence(
  client: pg.ClientBase,
  schema: string,
  fence: Fence,
  next: boolean,
): Promise<number> {
  const s = quoteSchema(schema);
  // FOR UPDATE waits for a write in flight (it holds the row FOR SHARE) to commit.
  const { rows } = await client.query<{ epoch: string; holder: string }>(
    `SELECT epoch, holder FROM ${s}.fence WHERE name = $1 FOR UPDATE`,
    [fence.name],
  );
  const current = rows[0];
  let epoch = fence.epoch;
  if (next) epoch = current === undefined ? 1 : Number(current.epoch) + 1;
  else if (
    current !== undefined &&
    (Number(current.epoch) > epoch || (Number(current.epoch) === epoch && current.holder !== fence.holder))
  ) {
    throw fencedError(`postgres:${schema}`, { ...fence, epoch }, current);
  }
  await client.query(
    `INSERT INTO ${s}.fence (name, epoch, holder) VALUES ($1, $2, $3)
     ON CONFLICT (name) DO UPDATE SET epoch = EXCLUDED.epoch, holder = EXCLUDED.holder, acquired_at = now()`,
    [fence.name, epoch, fence.holder],
  );
  return epoch;
}

/** Read every table into `view`. */
async function load(client: pg.ClientBase, s: string, view: MemoryCheckpointStore): Promise<void> {
  const pairs = new Map<
    string,
    { watcher: string; sink: string; entries: CheckpointEntry[]; tombstones: CheckpointTombstone[] }
  >();
  const pairOf = (watcher: string, sink: string) => {
    const id = JSON.stringify([watcher, sink]);
    let pair = pairs.get(id);
    if (pair === undefined) {
      pair = { watcher, sink, entries: [], tombstones: [] };
      pairs.set(id, pair);
    }
    return pair;
  };
  for (const row of (
    await client.query<{ watcher: string; sink: string }>(`SELECT watcher, sink FROM ${s}.checkpoints`)
  ).rows)
    pairOf(row.watcher, row.sink);
  const delivered = await client.query<{
    watcher: string;
    sink: string;
    key: string;
    uid: string;
    resource_version: string;
    object: string;
    since: string | null;
  }>(
    `SELECT d.watcher, d.sink, d.key, st.uid, st.resource_version, st.object, d.since
       FROM ${s}.delivered d JOIN ${s}.states st ON st.id = d.state`,
  );
  for (const row of delivered.rows) {
    pairOf(row.watcher, row.sink).entries.push({
      key: toObjectKey(row.key),
      uid: orUndefined(row.uid),
      resourceVersion: orUndefined(row.resource_version),
      object: JSON.parse(row.object) as KubeObject,
      since: row.since ?? undefined,
    });
  }
  const tombstones = await client.query<{
    watcher: string;
    sink: string;
    key: string;
    uid: string;
    resource_version: string;
  }>(`SELECT watcher, sink, key, uid, resource_version FROM ${s}.tombstones`);
  for (const row of tombstones.rows) {
    pairOf(row.watcher, row.sink).tombstones.push({
      key: toObjectKey(row.key),
      uid: orUndefined(row.uid),
      resourceVersion: orUndefined(row.resource_version),
    });
  }
  for (const pair of pairs.values()) view.restore(pair.watcher, pair.sink, pair.entries, pair.tombstones);
  const watchers = await client.query<{
    watcher: string;
    resource_version: string;
    scope: string;
    sinks: string;
    confirmed_at: string;
  }>(`SELECT watcher, resource_version, scope, sinks, confirmed_at FROM ${s}.watchers`);
  for (const row of watchers.rows) {
    view.recordConfirmedVersion(row.watcher, {
      resourceVersion: row.resource_version,
      scope: row.scope,
      sinks: JSON.parse(row.sinks) as string[],
      at: Number(row.confirmed_at),
    });
  }
}

const orUndefined = (value: string): string | undefined => (value === '' ? undefined : value);
