/**
 * The apiserver client every other layer uses: JSON requests with timeouts, 429 handling and
 * one re-authentication on 401, and raw streams for watches.
 *
 * Contract:
 * - `request()` has an overall deadline (default 30 s) covering headers and body; a 429 is
 *   retried after its Retry-After (1 s when absent) up to `maxAttempts` tries in all, sleeping on
 *   the injected clock and giving up at once when the signal aborts.
 * - `stream()` has only a deadline for the response headers; the body may stay open forever (the
 *   watcher enforces its own inactivity deadline). No 429 retry: the watcher backs off itself.
 * - Both: a 401 invalidates the credentials and retries exactly once; any other non-2xx answer is
 *   an ApiError carrying the Status (with method and path, never credentials); network failures
 *   are TransportErrors; an aborted signal rejects (or ends the stream) with the signal's reason.
 */
import type { Readable } from 'node:stream';
import { apiErrorFromResponse, type ApiError } from '../errors/api-error.js';
import { isTooManyRequests, isUnauthorized, retryAfterSeconds } from '../errors/classify.js';
import { DecodeError, RavenError, TransportError } from '../errors/raven-error.js';
import { sleep, systemClock, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { withQuery, type Query } from './request-path.js';
import type { ResolvedConfig } from './resolved-config.js';
import { bodyChunks } from './body-chunks.js';
import { abortReason, raceSignal } from '../util/signals.js';
import { Transport, type WireResponse } from './transport.js';
import { defaultUserAgent } from './version.js';

export interface KubeClientOptions {
  clock?: Clock;
  logger?: Logger;
  /** Sockets to the apiserver; default 100. */
  maxConnections?: number;
  /** Overall deadline of request(); default 30 000 ms. */
  requestTimeoutMs?: number;
  /** Deadline for a stream's response headers; default 30 000 ms. */
  streamHeadersTimeoutMs?: number;
  /** Tries in all for a request answered 429; default 5. */
  maxAttempts?: number;
  /** Default `kube-raven/<version>`. */
  userAgent?: string;
  /** Watch over HTTP/2 where a TLS apiserver offers it (one PINGed connection for every watch); default true. */
  http2?: boolean;
}

export interface RequestOptions {
  method: string;
  path: string;
  query?: Query;
  /** JSON-encoded unless it is already a string or bytes. */
  body?: unknown;
  /** Default `application/json` when there is a body. */
  contentType?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Overrides the client's request timeout. */
  timeoutMs?: number;
}

export interface StreamOptions {
  path: string;
  query?: Query;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface StreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** Raw chunks; ends with the signal's reason on abort, a TransportError on a broken connection. */
  body: AsyncIterable<Uint8Array>;
}

/** The server's Kubernetes version, as `/version` gives it (`minor` without a suffix such as `+`). */
export interface ServerVersion {
  major: number;
  minor: number;
  gitVersion: string;
}

/** A 429 without Retry-After waits this long: the apiserver normally sends one, so this is rare. */
const defaultThrottleDelayMs = 1_000;

/**
 * A client for one apiserver.
 *
 * @example
 * const client = new KubeClient(await loadConfig());
 * const pods = await client.request<PodList>({ method: 'GET', path: '/api/v1/pods', query: { limit: 10 } });
 */
export class KubeClient {
  readonly #config: ResolvedConfig;
  readonly #transport: Transport;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #requestTimeoutMs: number;
  readonly #streamHeadersTimeoutMs: number;
  readonly #maxAttempts: number;
  #version: Promise<ServerVersion> | undefined;

  constructor(config: ResolvedConfig, options: KubeClientOptions = {}) {
    this.#config = config;
    this.#clock = options.clock ?? systemClock;
    this.#logger = (options.logger ?? silentLogger).child({ component: 'kube-client' });
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#streamHeadersTimeoutMs = options.streamHeadersTimeoutMs ?? 30_000;
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.#transport = new Transport({
      server: config.server,
      tls: config.tls,
      auth: config.auth,
      userAgent: options.userAgent ?? defaultUserAgent,
      clock: this.#clock,
      logger: this.#logger,
      ...(options.http2 === undefined ? {} : { http2: options.http2 }),
      ...(config.proxyUrl === undefined ? {} : { proxyUrl: config.proxyUrl }),
      ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
    });
  }

  /** The namespace of the configuration's context (or the pod's, in-cluster). */
  get namespace(): string {
    return this.#config.namespace;
  }

  /** The apiserver URL. */
  get server(): string {
    return this.#config.server;
  }

  /**
   * The server's version from `GET /version`, asked once per client (one attempt, no retries:
   * callers use it to choose, and choose a default when it is undefined). A failed ask is
   * forgotten, so the next call asks again. The ask is shared by every caller: `signal` ends this
   * caller's wait (undefined), not the ask.
   */
  async serverVersion(signal?: AbortSignal): Promise<ServerVersion | undefined> {
    const asked = (this.#version ??= this.#exchange(
      { method: 'GET', path: '/version', timeoutMs: 10_000 },
      '/version',
      { accept: 'application/json' },
      undefined,
    ).then(({ statusCode, text }) => {
      const version = statusCode === 200 ? parseServerVersion(text) : undefined;
      if (version === undefined) throw new TransportError(`GET /version answered ${statusCode}`);
      return version;
    }));
    asked.catch(() => {
      if (this.#version === asked) this.#version = undefined;
    });
    try {
      return await raceSignal(asked, signal);
    } catch {
      return undefined;
    }
  }

  /** Send a JSON request and decode the JSON answer (`undefined` for an empty body). */
  async request<T>(opts: RequestOptions): Promise<T> {
    const path = withQuery(opts.path, opts.query);
    const body = encodeBody(opts.body);
    const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
    if (body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
    let reauthenticated = false;
    for (let attempt = 1; ; attempt++) {
      const { statusCode, text, retryAfter } = await this.#exchange(opts, path, headers, body);
      if (statusCode >= 200 && statusCode < 300) return decode(text, opts.method, path) as T;
      const err = apiErrorFromResponse(
        statusCode,
        text,
        { method: opts.method, path },
        retryAfter,
        this.#clock.now(),
      );
      if (isUnauthorized(err) && !reauthenticated) {
        reauthenticated = true;
        this.#reauthenticate(err);
        attempt--;
        continue;
      }
      if (isTooManyRequests(err) && attempt < this.#maxAttempts) {
        const delayMs = (retryAfterSeconds(err) ?? defaultThrottleDelayMs / 1000) * 1000;
        this.#logger.debug(
          { path, attempt, delayMs },
          'throttled by the apiserver; retrying after Retry-After',
        );
        await sleep(this.#clock, delayMs, opts.signal);
        continue;
      }
      throw err;
    }
  }

  /** Open a streaming GET (watch, streamed list). The caller must consume or abandon the body. */
  async stream(opts: StreamOptions): Promise<StreamResponse> {
    const path = withQuery(opts.path, opts.query);
    const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
    let reauthenticated = false;
    for (;;) {
      const res = await this.#open(path, headers, opts.signal, opts.query?.watch === true);
      const signal = res.signal;
      if (res.statusCode >= 200 && res.statusCode < 300) {
        return { statusCode: res.statusCode, headers: res.headers, body: chunks(res.body, signal, path) };
      }
      const text = await readText(res, signal, 'GET', path);
      const err = apiErrorFromResponse(
        res.statusCode,
        text,
        { method: 'GET', path },
        header(res, 'retry-after'),
        this.#clock.now(),
      );
      if (isUnauthorized(err) && !reauthenticated) {
        reauthenticated = true;
        this.#reauthenticate(err);
        continue;
      }
      throw err;
    }
  }

  /** Let in-flight requests finish, then close the connections. */
  close(): Promise<void> {
    return this.#transport.close();
  }

  /** Close the connections now; in-flight requests and streams fail. */
  destroy(err?: Error): Promise<void> {
    return this.#transport.destroy(err);
  }

  #reauthenticate(err: ApiError): void {
    this.#logger.info({ request: err.request }, 'credentials rejected; refreshing them and retrying once');
    this.#config.auth.invalidate();
  }

  /** One request/response under the overall deadline. */
  async #exchange(
    opts: RequestOptions,
    path: string,
    headers: Record<string, string>,
    body: string | Uint8Array | undefined,
  ): Promise<{ statusCode: number; text: string; retryAfter: string | undefined }> {
    const timeoutMs = opts.timeoutMs ?? this.#requestTimeoutMs;
    const deadline = new AbortController();
    const handle = this.#clock.setTimeout(() => {
      deadline.abort(
        new TransportError(`${opts.method} ${path}: no complete response within ${timeoutMs} ms`),
      );
    }, timeoutMs);
    const signal =
      opts.signal === undefined ? deadline.signal : AbortSignal.any([opts.signal, deadline.signal]);
    try {
      const res = await this.#transport.send({
        method: opts.method,
        path,
        headers,
        signal,
        ...(body === undefined ? {} : { body }),
      });
      const text = await readText(res, signal, opts.method, path);
      return { statusCode: res.statusCode, text, retryAfter: header(res, 'retry-after') };
    } finally {
      this.#clock.clearTimeout(handle);
    }
  }

  /** Send a streaming GET, with a deadline for the response headers only. */
  async #open(
    path: string,
    headers: Record<string, string>,
    userSignal: AbortSignal | undefined,
    longLived: boolean,
  ): Promise<WireResponse & { signal: AbortSignal }> {
    const deadline = new AbortController();
    const ms = this.#streamHeadersTimeoutMs;
    const handle = this.#clock.setTimeout(() => {
      deadline.abort(new TransportError(`GET ${path}: no response headers within ${ms} ms`));
    }, ms);
    const signal =
      userSignal === undefined ? deadline.signal : AbortSignal.any([userSignal, deadline.signal]);
    try {
      const res = await this.#transport.send({
        method: 'GET',
        path,
        headers,
        signal,
        bodyTimeoutMs: 0,
        longLived,
      });
      return { ...res, signal };
    } finally {
      this.#clock.clearTimeout(handle);
    }
  }
}

function encodeBody(body: unknown): string | Uint8Array | undefined {
  if (body === undefined) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  return JSON.stringify(body);
}

function decode(text: string, method: string, path: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new DecodeError(`${method} ${path}: response is not JSON: ${text.slice(0, 200)}`, { cause: err });
  }
}

function header(res: WireResponse, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function failure(err: unknown, signal: AbortSignal, method: string, path: string): Error {
  if (signal.aborted) return abortReason(signal);
  if (err instanceof RavenError) return err;
  return new TransportError(`${method} ${path}: ${(err as Error).message}`, { cause: err });
}

async function readText(
  res: WireResponse,
  signal: AbortSignal,
  method: string,
  path: string,
): Promise<string> {
  try {
    return await res.body.text();
  } catch (err) {
    throw failure(err, signal, method, path);
  }
}

function chunks(body: Readable, signal: AbortSignal, path: string): AsyncIterable<Uint8Array> {
  return bodyChunks(body, (err) => failure(err, signal, 'GET', path));
}

/** `/version`'s answer as numbers; undefined when it does not say which version. */
export function parseServerVersion(text: string): ServerVersion | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null) return undefined;
  const { major, minor, gitVersion } = body as Record<string, unknown>;
  const git = typeof gitVersion === 'string' ? gitVersion : '';
  const fromGit = /^v?(\d+)\.(\d+)/.exec(git);
  // Managed servers write the minor with a suffix ("33+"); the gitVersion says it too.
  const number = (value: unknown, fallback: string | undefined): number =>
    Number.parseInt(typeof value === 'string' && /^\d/.test(value) ? value : (fallback ?? ''), 10);
  const version = { major: number(major, fromGit?.[1]), minor: number(minor, fromGit?.[2]), gitVersion: git };
  return Number.isNaN(version.major) || Number.isNaN(version.minor) ? undefined : version;
}
