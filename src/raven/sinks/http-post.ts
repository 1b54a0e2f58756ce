/**
 * The one HTTP call every HTTP sink makes: POST a body, read a short answer, and turn anything but
 * 2xx into a {@link SinkHttpError} that says whether a retry may help.
 *
 * Classification: 2xx delivered; 408, 429 and 5xx retryable (with Retry-After, as seconds or an
 * HTTP date, on the error); any other status not retryable; network failures and timeouts
 * retryable. Messages name the URL as `scheme://host/…` only: webhook URLs carry tokens.
 *
 * Each HTTP sink owns a keep-alive pool ({@link SinkPool}, the project's HTTP core) that it
 * closes with itself, unless given a dispatcher to share.
 */
import type { Dispatcher } from 'undici';
import { ConfigError, TransportError } from '../../errors/raven-error.js';
import { createPool, type PoolTls } from '../../http/http-pool.js';
import { send } from '../../http/send.js';
import { defaultUserAgent } from '../../client/version.js';
import { abortReason } from '../../util/signals.js';
import { systemClock, type Clock } from '../../util/clock.js';
import { parseRetryAfter } from '../../util/retry-after.js';
import { scrubUrl } from './scrub-url.js';
import { SinkHttpError } from './sink-http-error.js';

/** Answers longer than this are cut before they reach an error message. */
const MAX_ANSWER_CHARS = 2_000;
/** Shown in error messages: enough for a product's error code, too little to leak much. */
const ANSWER_SNIPPET_CHARS = 200;

/**
 * An HTTP sink's connections: the dispatcher it was given (shared, not closed by the sink), or a
 * pool of its own, built at the first delivery and closed with the sink: keep-alive for 30 s (a
 * sink posts in bursts), at most 16 sockets to its receiver (deliveries are at most `concurrency`
 * per sink, 4 by default), 10 s to connect, with `tls` (trusted CAs, a client certificate) for
 * every connection it opens.
 */
export class SinkPool {
  readonly #given: Dispatcher | undefined;
  readonly #tls: PoolTls | undefined;
  #own: Dispatcher | undefined;

  constructor(dispatcher?: Dispatcher, tls?: PoolTls) {
    this.#given = dispatcher;
    this.#tls = tls;
  }

  get dispatcher(): Dispatcher {
    if (this.#given !== undefined) return this.#given;
    this.#own ??= createPool({
      connections: 16,
      keepAliveTimeoutMs: 30_000,
      ...(this.#tls === undefined ? {} : { tls: this.#tls }),
    });
    return this.#own;
  }

  /** Let in-flight requests finish, then close the sink's own pool. */
  async close(): Promise<void> {
    const own = this.#own;
    this.#own = undefined;
    if (own !== undefined) await own.close();
  }
}

export interface HttpPostOptions {
  /** Label for messages: `webhook sink "audit"`. */
  label: string;
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  signal: AbortSignal;
  dispatcher: Dispatcher;
  clock?: Clock;
  /** Read a product-specific wait from a non-2xx answer's body (Discord's `retry_after`). */
  retryAfterFromBody?: (statusCode: number, body: string) => number | undefined;
}

export interface HttpAnswer {
  statusCode: number;
  body: string;
}

/**
 * POST and classify. Resolves with the 2xx answer; rejects with a {@link SinkHttpError}, or with
 * the signal's reason when `signal` aborts.
 */
export async function httpPost(options: HttpPostOptions): Promise<HttpAnswer> {
  const { signal } = options;
  if (signal.aborted) throw abortReason(signal);
  const where = `${options.label}: POST ${scrubUrl(options.url)}`;
  let res: Dispatcher.ResponseData;
  try {
    res = await send(options.dispatcher, {
      url: options.url,
      method: 'POST',
      headers: { 'user-agent': defaultUserAgent, ...options.headers },
      body: options.body,
      signal,
      headersTimeoutMs: options.timeoutMs,
      bodyTimeoutMs: options.timeoutMs,
    });
  } catch (err) {
    if (isAborted(signal)) throw abortReason(signal);
    const failure = err instanceof TransportError ? err.cause : err;
    throw new SinkHttpError(`${where} failed: ${networkReason(failure, options.timeoutMs)}`, {
      retryable: true,
      cause: err,
    });
  }
  let body: string;
  try {
    body = await readAnswer(res.body);
  } catch (err) {
    if (isAborted(signal)) throw abortReason(signal);
    if (res.statusCode >= 200 && res.statusCode < 300) return { statusCode: res.statusCode, body: '' };
    throw new SinkHttpError(`${where} answered ${res.statusCode}; reading the answer failed`, {
      retryable: isRetryableStatus(res.statusCode),
      statusCode: res.statusCode,
      cause: err,
    });
  }
  if (res.statusCode >= 200 && res.statusCode < 300) return { statusCode: res.statusCode, body };
  const retryable = isRetryableStatus(res.statusCode);
  const retryAfterMs = retryable
    ? (options.retryAfterFromBody?.(res.statusCode, body) ??
      parseRetryAfter(res.headers['retry-after'], (options.clock ?? systemClock).now()))
    : undefined;
  const snippet = body.trim().slice(0, ANSWER_SNIPPET_CHARS);
  throw new SinkHttpError(
    `${where} answered ${res.statusCode}${snippet === '' ? '' : `: ${snippet}`}` +
      (retryable ? '' : ' (not retried: the request itself was refused)'),
    { retryable, statusCode: res.statusCode, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) },
  );
}

/** 408 Request Timeout, 429 Too Many Requests and every 5xx may succeed later; other answers not. */
export function isRetryableStatus(statusCode: number): boolean {
  return statusCode === 408 || statusCode === 429 || statusCode >= 500;
}

async function readAnswer(body: Dispatcher.ResponseData['body']): Promise<string> {
  let text = '';
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (text.length < MAX_ANSWER_CHARS) text += chunk.toString('utf8');
  }
  return text.slice(0, MAX_ANSWER_CHARS);
}

function networkReason(err: unknown, timeoutMs: number): string {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    return `no answer within ${timeoutMs} ms`;
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'connecting timed out';
  if (code === 'UND_ERR_SOCKET') return 'the connection closed before an answer';
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const causeCode =
    typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : code;
  return causeCode === '' ? 'network error' : causeCode;
}

/** Configured headers may not replace those Raven sets itself (`content-type`, `x-raven-*`, ...). */
export function checkExtraHeaders(headers: Record<string, string> | undefined, path: string): void {
  for (const name of Object.keys(headers ?? {})) {
    const lower = name.toLowerCase();
    if (
      lower === 'content-type' ||
      lower === 'content-length' ||
      lower === 'host' ||
      lower.startsWith('x-raven-')
    )
      throw new ConfigError(`header "${name}" is set by Raven and cannot be configured`, {
        path: `${path}.headers`,
      });
  }
}

/** An absolute http(s) URL, or a config error naming `path` (the URL itself is never shown). */
export function checkUrl(url: string, path: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('not a valid absolute URL; expected https://host/path', { path });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new ConfigError(`scheme ${parsed.protocol} is not supported; use http: or https:`, { path });
}

/** Read through a call: the signal may abort across an await, which narrowing cannot see. */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}
