/**
 * Appends change events (and gap notices) to a Redis stream: one entry per change (`id`, `type`,
 * and the change event as JSON in `event`), `XADD` with `MAXLEN ~ maxLen` so the stream stays
 * bounded (Redis trims whole nodes, so it may hold a little more), through a Lua script that
 * skips a change the stream already has (`redis-append.ts`): a retry or a restart's replay adds
 * nothing.
 *
 * Deliveries in flight together are appended by one script call (one round trip, one command,
 * `batch-writer.ts`); a batch with a failure fails whole and each change is retried, which the
 * script makes harmless. While the connection is down, commands fail at once instead of queueing in memory
 * (the client's offline queue is off) and the client reconnects in the background. Failures are
 * classified by `isRetryableRedisError`: a lost connection and error replies about the server's
 * state (loading, out of memory, read-only) are retried; other error replies are not. The URL (it
 * may hold a password) never appears in errors.
 */
import { Redis } from 'ioredis';
import { isRetryableRedisError } from '../../errors/classify.js';
import { ConfigError, SinkError } from '../../errors/raven-error.js';
import type { SinkRecord } from '../model/gap-notice.js';
import { BatchWriter } from './batch-writer.js';
import { APPEND_SCRIPT, appendBatchArguments, appendItem, type AppendItem } from './redis-append.js';
import type { Sink } from './sink.js';

export interface RedisSinkOptions {
  name: string;
  /** `redis://user:password@host:6379/0`, or `rediss://` for TLS. */
  url: string;
  /** The stream's key; default `raven:changes`. */
  stream?: string;
  /** `MAXLEN ~` of every XADD; default 100 000 entries. */
  maxLen?: number;
  /** How long the per-object de-duplication keys live after an object's last change; default 7 days. */
  dedupeTtlSeconds?: number;
  /** Most changes per script call; default 500. */
  maxBatch?: number;
  /** To connect, and for each script call; default 10 000 ms. */
  timeoutMs?: number;
}

/** ioredis with the append script defined as a command. */
type RedisWithAppend = Redis & {
  ravenAppend: (...args: string[]) => Promise<unknown>;
};

/**
 * @example
 * const sink = new RedisSink({ name: 'stream', url: 'redis://127.0.0.1:6379', maxLen: 1_000_000 });
 */
export class RedisSink implements Sink {
  readonly name: string;
  readonly #redis: RedisWithAppend;
  readonly #stream: string;
  readonly #limits: { maxLen: number; dedupeTtlSeconds: number };
  readonly #writer: BatchWriter<AppendItem>;
  #connecting: Promise<void> | undefined;

  constructor(options: RedisSinkOptions) {
    const at = `sinks.${options.name}`;
    this.name = options.name;
    this.#stream = options.stream ?? 'raven:changes';
    if (this.#stream === '') throw new ConfigError('name the stream key', { path: `${at}.stream` });
    this.#limits = {
      maxLen: options.maxLen ?? 100_000,
      dedupeTtlSeconds: options.dedupeTtlSeconds ?? 7 * 86_400,
    };
    if (!(this.#limits.maxLen >= 1))
      throw new ConfigError('maxLen must be at least 1', { path: `${at}.maxLen` });
    const timeoutMs = options.timeoutMs ?? 10_000;
    const redis = new Redis(options.url, {
      lazyConnect: true,
      // Fail at once while disconnected: the delivery layer retries; a queue here would grow unbounded.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: timeoutMs,
      commandTimeout: timeoutMs,
      connectionName: `raven-sink-${options.name}`,
      retryStrategy: (times) => Math.min(times * 100, 2000),
    });
    // Connection errors surface as failed writes; the event only keeps ioredis from printing them.
    redis.on('error', () => undefined);
    // No fixed key count: each call names it (the stream and one de-duplication key per change).
    redis.defineCommand('ravenAppend', { lua: APPEND_SCRIPT });
    this.#redis = redis as RedisWithAppend;
    this.#writer = new BatchWriter((batch) => this.#append(batch), {
      maxBatch: options.maxBatch ?? 500,
      maxInFlight: 2,
    });
  }

  deliver(record: SinkRecord, signal: AbortSignal): Promise<void> {
    return this.#writer.submit(appendItem(this.#stream, record), signal);
  }

  async close(): Promise<void> {
    if (this.#redis.status === 'wait' || this.#redis.status === 'end') {
      this.#redis.disconnect();
      return;
    }
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }

  async #append(batch: AppendItem[]): Promise<void> {
    try {
      await this.#connect();
      await this.#redis.ravenAppend(...appendBatchArguments(this.#stream, batch, this.#limits));
    } catch (err) {
      throw this.#sinkError(err, batch.length);
    }
  }

  /**
   * The first connection (and a new one after the client gave up): shared by the writes that wait
   * for it. While the client is reconnecting on its own, writes go straight on and fail at once.
   */
  #connect(): Promise<void> | undefined {
    const status = this.#redis.status;
    if (this.#connecting === undefined && (status === 'wait' || status === 'end'))
      this.#connecting = this.#redis.connect().finally(() => {
        this.#connecting = undefined;
      });
    return this.#connecting;
  }

  #sinkError(err: unknown, count: number): SinkError {
    const message = err instanceof Error ? err.message : String(err);
    return new SinkError(`redis sink "${this.name}": appending ${count} change(s) failed: ${message}`, {
      retryable: isRetryableRedisError(err),
      cause: err,
    });
  }
}
