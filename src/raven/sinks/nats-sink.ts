/**
 * Publishes change events (and gap notices) to NATS JetStream, one message per change: the
 * change event as JSON, on a subject made from the change (`nats-subject.ts`), with the event's
 * id as `Nats-Msg-Id` so that JetStream stores a message published again (a retry whose ack was
 * lost, a replay after a restart) only once, within the stream's duplicate window.
 *
 * A change counts as delivered when JetStream acknowledged it (stored). Deliveries in flight
 * together are published as one burst and their acks awaited together (`batch-writer.ts`); a
 * burst with a failure is retried whole, which the message ids make harmless. Raven creates the
 * stream when it does not exist (`createStream`), capturing the template's subjects; an existing
 * stream is used as it is. Failures are classified by `isRetryableNatsError`: a server that is
 * down, no JetStream responders and timeouts are retried; a message over the server's payload
 * limit or a permission refusal is not.
 */
import { connect, headers, nanos, type JetStreamClient, type NatsConnection } from 'nats';
import { isRetryableNatsError } from '../../errors/classify.js';
import { ConfigError, SinkError } from '../../errors/raven-error.js';
import type { SinkRecord } from '../model/gap-notice.js';
import { BatchWriter } from './batch-writer.js';
import { subjectTemplateProblem } from '../model/template-check.js';
import { natsSubject, streamSubjects } from './nats-subject.js';
import type { Sink } from './sink.js';
import { recordJson } from '../model/record-json.js';

export interface NatsSinkOptions {
  name: string;
  /** Server URLs, `nats://host:4222` (user and password may be in the URL). */
  servers: string[];
  /** Default `raven.{{resource.kind}}.{{namespace}}`. */
  subject?: string;
  /** The JetStream stream; default `RAVEN`. */
  stream?: string;
  /** Create the stream when it does not exist; default true. */
  createStream?: boolean;
  /** The created stream's de-duplication window; default 10 minutes. */
  duplicateWindowMs?: number;
  /** Most changes per burst; default 500. */
  maxBatch?: number;
  /** To connect, and for each ack; default 10 000 ms. */
  timeoutMs?: number;
}

interface Message {
  subject: string;
  id: string;
  data: Uint8Array;
}

const DEFAULT_SUBJECT = 'raven.{{resource.kind}}.{{namespace}}';
const STREAM_NAME = /^[A-Za-z0-9_-]{1,255}$/;
const encoder = new TextEncoder();

/**
 * @example
 * const sink = new NatsSink({
 *   name: 'bus',
 *   servers: ['nats://127.0.0.1:4222'],
 *   subject: 'raven.prod-eu.{{resource.kind}}.{{namespace}}',
 * });
 */
export class NatsSink implements Sink {
  readonly name: string;
  readonly #options: NatsSinkOptions;
  readonly #subject: string;
  readonly #stream: string;
  readonly #timeoutMs: number;
  readonly #writer: BatchWriter<Message>;
  #connection: Promise<{ nc: NatsConnection; js: JetStreamClient }> | undefined;
  #closed = false;

  constructor(options: NatsSinkOptions) {
    const at = `sinks.${options.name}`;
    this.name = options.name;
    this.#options = options;
    this.#subject = options.subject ?? DEFAULT_SUBJECT;
    const problem = subjectTemplateProblem(this.#subject);
    if (problem !== undefined) throw new ConfigError(problem, { path: `${at}.subject` });
    this.#stream = options.stream ?? 'RAVEN';
    if (!STREAM_NAME.test(this.#stream))
      throw new ConfigError('a stream name is letters, digits, _ and -', { path: `${at}.stream` });
    if (options.servers.length === 0)
      throw new ConfigError('name at least one server, like nats://127.0.0.1:4222', {
        path: `${at}.servers`,
      });
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#writer = new BatchWriter((messages) => this.#publish(messages), {
      maxBatch: options.maxBatch ?? 500,
      maxInFlight: 4,
    });
  }

  deliver(record: SinkRecord, signal: AbortSignal): Promise<void> {
    const message = {
      subject: natsSubject(this.#subject, record),
      id: record.id,
      data: encoder.encode(recordJson(record)),
    };
    return this.#writer.submit(message, signal);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const connection = this.#connection;
    this.#connection = undefined;
    if (connection === undefined) return;
    try {
      await (await connection).nc.close();
    } catch {
      // It never connected: nothing to close.
    }
  }

  async #publish(messages: Message[]): Promise<void> {
    try {
      const { js } = await this.#connect();
      const acks = await Promise.allSettled(
        messages.map((m) => {
          const h = headers();
          h.set('Nats-Msg-Id', m.id);
          return js.publish(m.subject, m.data, { msgID: m.id, headers: h, timeout: this.#timeoutMs });
        }),
      );
      const failed = acks.find((a) => a.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    } catch (err) {
      throw this.#sinkError(err, messages.length);
    }
  }

  /** One connection, made on first use; a failed attempt is forgotten so the next write tries again. */
  #connect(): Promise<{ nc: NatsConnection; js: JetStreamClient }> {
    if (this.#closed) return Promise.reject(new Error('the sink is closed'));
    this.#connection ??= (async () => {
      const nc = await connect({
        servers: this.#options.servers,
        name: `raven-sink-${this.name}`,
        timeout: this.#timeoutMs,
        // Once connected, reconnect for ever: publishes in between fail on their ack timeout and are retried.
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
      });
      try {
        if (this.#options.createStream ?? true) await this.#ensureStream(nc);
        return { nc, js: nc.jetstream({ timeout: this.#timeoutMs }) };
      } catch (err) {
        await nc.close();
        throw err;
      }
    })().catch((err: unknown) => {
      this.#connection = undefined;
      throw err;
    });
    return this.#connection;
  }

  async #ensureStream(nc: NatsConnection): Promise<void> {
    const jsm = await nc.jetstreamManager({ timeout: this.#timeoutMs });
    try {
      await jsm.streams.info(this.#stream);
    } catch (err) {
      if ((err as { api_error?: { err_code?: number } }).api_error?.err_code !== 10059) throw err;
      await jsm.streams.add({
        name: this.#stream,
        subjects: streamSubjects(this.#subject),
        duplicate_window: nanos(this.#options.duplicateWindowMs ?? 10 * 60_000),
      });
    }
  }

  #sinkError(err: unknown, count: number): SinkError {
    const e = err as { message?: unknown; code?: unknown };
    const message = typeof e.message === 'string' ? e.message : String(err);
    const code = typeof e.code === 'string' || typeof e.code === 'number' ? ` (${String(e.code)})` : '';
    return new SinkError(
      `nats sink "${this.name}": publishing ${count} change(s) failed: ${message}${code}`,
      {
        retryable: isRetryableNatsError(err),
        cause: err,
      },
    );
  }
}
