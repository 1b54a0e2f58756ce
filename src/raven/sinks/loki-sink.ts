/**
 * Pushes change events (and gap notices) to Grafana Loki's push API (`POST /loki/api/v1/push`,
 * JSON): each change is one log line, the change event as JSON (as the webhook's body), in a
 * stream labelled with a few bounded values ({@link lokiLabels}); its timestamp is the event's
 * `time` in nanoseconds. A change pushed again (a retry, a batch resent) is the same stream,
 * timestamp and line, which Loki stores once.
 *
 * Deliveries in flight together are pushed in one request (`batch-writer.ts`), cut into requests
 * of at most {@link MAX_PUSH_BYTES} of lines. Answers are classified as for every HTTP sink
 * (`http-post.ts`): 429, 5xx and network failures are retryable (Retry-After honoured), other
 * answers are not. Loki answers 400 when it refuses some entries of a push (too old, line too
 * long) while keeping the others; the entries of a refused batch are then pushed one by one, so
 * only the refused ones fail (the others are stored once: a repeated entry is dropped).
 */
import type { Dispatcher } from 'undici';
import { ConfigError, SinkError } from '../../errors/raven-error.js';
import type { PoolTls } from '../../http/http-pool.js';
import { systemClock, type Clock } from '../../util/clock.js';
import type { SinkRecord } from '../model/gap-notice.js';
import { BatchWriter } from './batch-writer.js';
import { checkExtraHeaders, checkUrl, httpPost, SinkPool } from './http-post.js';
import { SinkHttpError } from './sink-http-error.js';
import type { Sink } from './sink.js';
import { recordJson } from '../model/record-json.js';

export interface LokiSinkOptions {
  name: string;
  /** Loki's base URL, `http://loki:3100` (or a gateway's, with a path prefix); the push path is added. */
  url: string;
  /** Sent as `X-Scope-OrgID`, for a multi-tenant Loki; none when absent. */
  tenant?: string;
  /** Basic authentication (with `password`), e.g. for Grafana Cloud or a gateway. */
  username?: string;
  password?: string;
  /** `Authorization: Bearer <token>`; not with `username`. */
  bearerToken?: string;
  /** Extra headers; may not replace `content-type`, `authorization` when set above, or `x-scope-orgid`. */
  headers?: Record<string, string>;
  /** Labels added to every stream, e.g. `{ cluster: 'prod' }`; may not reuse Raven's own label names. */
  labels?: Record<string, string>;
  /** Label each stream with the change's namespace; default true. */
  namespaceLabel?: boolean;
  /** Most changes per push; default 500. */
  maxBatch?: number;
  /** Per request, for the answer's headers and then its body; default 10 000 ms. */
  timeoutMs?: number;
  /** Trusted CAs, client certificate, server name for an https URL. */
  tls?: PoolTls;
  dispatcher?: Dispatcher;
  clock?: Clock;
}

/** The labels Raven sets on each stream. */
export const LOKI_LABELS = ['watcher', 'resource', 'namespace', 'type'] as const;

/** Lines per request stop growing past this many bytes (Loki's default gRPC limit is 4 MiB). */
export const MAX_PUSH_BYTES = 1 << 20;

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const PUSH_PATH = '/loki/api/v1/push';

interface Entry {
  labels: Record<string, string>;
  /** The stream's key: its labels in a fixed order. */
  stream: string;
  /** Nanoseconds since the epoch, as Loki's JSON wants it: a string. */
  timestamp: string;
  line: string;
}

/**
 * The stream labels of a change: `watcher`, `resource` (`deployments.apps`, `configmaps` for the
 * core group), `namespace` (absent for cluster-scoped objects, or when `namespaceLabel` is off)
 * and `type` (`added`, `modified`, `deleted`, `gap`), after the configured static labels. Never
 * the object's name or uid: those are in the line, where `| json` finds them.
 *
 * @example
 * lokiLabels(event, { cluster: 'prod' }, true);
 * // { cluster: 'prod', watcher: 'deploys', resource: 'deployments.apps', namespace: 'shop', type: 'modified' }
 */
export function lokiLabels(
  record: SinkRecord,
  staticLabels: Record<string, string> = {},
  namespaceLabel = true,
): Record<string, string> {
  const { group, resource } = record.resource;
  const labels: Record<string, string> = {
    ...staticLabels,
    watcher: record.watcher,
    resource: group === '' ? resource : `${resource}.${group}`,
  };
  if (namespaceLabel && record.namespace !== undefined && record.namespace !== '')
    labels.namespace = record.namespace;
  labels.type = record.type;
  return labels;
}

/** A record's entry timestamp: its `time` (ISO 8601) in nanoseconds, the same on every delivery. */
export function lokiTimestamp(record: SinkRecord): string | undefined {
  const ms = Date.parse(record.time);
  if (!Number.isFinite(ms) || ms < 0) return undefined;
  return `${BigInt(ms) * 1_000_000n}`;
}

/**
 * @example
 * const sink = new LokiSink({ name: 'logs', url: 'http://loki:3100', labels: { cluster: 'prod' } });
 */
export class LokiSink implements Sink {
  readonly name: string;
  readonly #url: string;
  readonly #headers: Record<string, string>;
  readonly #labels: Record<string, string>;
  readonly #namespaceLabel: boolean;
  readonly #timeoutMs: number;
  readonly #pool: SinkPool;
  readonly #clock: Clock;
  readonly #writer: BatchWriter<Entry>;

  constructor(options: LokiSinkOptions) {
    const at = `sinks.${options.name}`;
    checkUrl(options.url, `${at}.url`);
    checkExtraHeaders(options.headers, at);
    this.name = options.name;
    this.#url = options.url.replace(/\/+$/, '') + PUSH_PATH;
    this.#labels = checkLabels(options.labels ?? {}, `${at}.labels`);
    this.#namespaceLabel = options.namespaceLabel ?? true;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#headers = { ...options.headers, ...authHeaders(options, at) };
    this.#pool = new SinkPool(options.dispatcher, options.tls);
    this.#clock = options.clock ?? systemClock;
    this.#writer = new BatchWriter((batch) => this.#push(batch), {
      maxBatch: options.maxBatch ?? 500,
      maxInFlight: 2,
    });
  }

  deliver(record: SinkRecord, signal: AbortSignal): Promise<void> {
    const timestamp = lokiTimestamp(record);
    if (timestamp === undefined)
      return Promise.reject(
        new SinkError(`loki sink "${this.name}": ${record.id} has no valid time (${record.time})`, {
          retryable: false,
        }),
      );
    const labels = lokiLabels(record, this.#labels, this.#namespaceLabel);
    const entry: Entry = { labels, stream: JSON.stringify(labels), timestamp, line: recordJson(record) };
    return this.#writer.submit(entry, signal);
  }

  /** Let pushes in flight finish, then close the sink's own connections (a given dispatcher stays open). */
  async close(): Promise<void> {
    await this.#pool.close();
  }

  /** One outcome per entry: requests of at most MAX_PUSH_BYTES, a refused request retried entry by entry. */
  async #push(batch: Entry[]): Promise<unknown[]> {
    const outcomes: unknown[] = [];
    for (const part of cut(batch)) {
      try {
        await this.#post(part);
        for (let i = 0; i < part.length; i++) outcomes.push(undefined);
      } catch (err) {
        if (part.length === 1 || !(err instanceof SinkHttpError) || err.retryable) {
          for (let i = 0; i < part.length; i++) outcomes.push(err);
          continue;
        }
        for (const entry of part) outcomes.push(await this.#post([entry]).catch((one: unknown) => one));
      }
    }
    return outcomes;
  }

  async #post(entries: Entry[]): Promise<void> {
    const streams = new Map<string, { stream: Record<string, string>; values: [string, string][] }>();
    for (const entry of entries) {
      let stream = streams.get(entry.stream);
      if (stream === undefined) {
        stream = { stream: entry.labels, values: [] };
        streams.set(entry.stream, stream);
      }
      stream.values.push([entry.timestamp, entry.line]);
    }
    await httpPost({
      label: `loki sink "${this.name}"`,
      url: this.#url,
      body: JSON.stringify({ streams: [...streams.values()] }),
      headers: { ...this.#headers, 'content-type': 'application/json' },
      timeoutMs: this.#timeoutMs,
      // Each delivery keeps its own signal for the time it waits; a push shared by many is not cut short by one.
      signal: new AbortController().signal,
      clock: this.#clock,
      dispatcher: this.#pool.dispatcher,
    });
  }
}

/** Consecutive parts of at most MAX_PUSH_BYTES of lines (one entry at least). */
function cut(batch: Entry[]): Entry[][] {
  const parts: Entry[][] = [];
  let part: Entry[] = [];
  let bytes = 0;
  for (const entry of batch) {
    const size = Buffer.byteLength(entry.line);
    if (part.length > 0 && bytes + size > MAX_PUSH_BYTES) {
      parts.push(part);
      part = [];
      bytes = 0;
    }
    part.push(entry);
    bytes += size;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}

function checkLabels(labels: Record<string, string>, path: string): Record<string, string> {
  for (const [name, value] of Object.entries(labels)) {
    if (!LABEL_NAME.test(name) || name.startsWith('__'))
      throw new ConfigError(
        `label name "${name}" is not valid: use letters, digits and _, not starting with a digit or __`,
        { path },
      );
    if ((LOKI_LABELS as readonly string[]).includes(name))
      throw new ConfigError(`label "${name}" is set by Raven on every stream; choose another name`, {
        path,
      });
    if (value === '') throw new ConfigError(`label "${name}" is empty; Loki drops empty labels`, { path });
  }
  return { ...labels };
}

function authHeaders(options: LokiSinkOptions, at: string): Record<string, string> {
  const headers: Record<string, string> = {};
  const given = new Set(Object.keys(options.headers ?? {}).map((name) => name.toLowerCase()));
  const auth = options.username !== undefined || options.bearerToken !== undefined;
  if (options.username !== undefined && options.bearerToken !== undefined)
    throw new ConfigError('give username and password, or bearerToken, not both', {
      path: `${at}.bearerToken`,
    });
  if ((options.username === undefined) !== (options.password === undefined))
    throw new ConfigError('username and password go together: give both, or neither', {
      path: `${at}.${options.username === undefined ? 'username' : 'password'}`,
    });
  if (auth && given.has('authorization'))
    throw new ConfigError('authorization is set from username/password or bearerToken; not also in headers', {
      path: `${at}.headers`,
    });
  if (options.tenant !== undefined && given.has('x-scope-orgid'))
    throw new ConfigError('X-Scope-OrgID is set from tenant; not also in headers', { path: `${at}.headers` });
  if (options.username !== undefined && options.password !== undefined)
    headers.authorization = `Basic ${Buffer.from(`${options.username}:${options.password}`).toString('base64')}`;
  if (options.bearerToken !== undefined) headers.authorization = `Bearer ${options.bearerToken}`;
  if (options.tenant !== undefined) headers['x-scope-orgid'] = options.tenant;
  return headers;
}
