/**
 * The wire under the OpenStack transport: one JSON request, one complete answer, over the
 * project's HTTP core (`http/`): one pool keeps connections alive per origin (Keystone, Neutron
 * and Octavia are separate origins).
 *
 * Guarantees: the answer body is always read to the end (or destroyed); a network failure,
 * including a header or body timeout, becomes a {@link TransportError} with the cause; an aborted
 * request rejects with the signal's reason; after `close` every send fails at once with `ERR_CLOSED`
 * (not retried). Status codes are not interpreted here.
 */
import type { Dispatcher } from 'undici';
import { RavenError } from '../errors/raven-error.js';
import { createPool } from '../http/http-pool.js';
import { requestFailure, send } from '../http/send.js';

export interface WireRequest {
  method: string;
  /** Absolute URL with query. */
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Limit for the response headers to arrive, and between body chunks. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface WireAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** Sends one request; the seam tests and other transports plug into. */
export interface HttpExchange {
  send(req: WireRequest): Promise<WireAnswer>;
}

/**
 * The undici-backed exchange.
 *
 * @example
 * const wire = new UndiciExchange();
 * const answer = await wire.send({ method: 'GET', url: 'http://127.0.0.1:9696/v2.0/networks', headers: {}, timeoutMs: 30_000 });
 */
export class UndiciExchange implements HttpExchange {
  readonly #dispatcher: Dispatcher;
  readonly #owned: boolean;
  #closed = false;

  /** `dispatcher` lets a caller share a pool (or a proxy agent); otherwise one is built and owned. */
  constructor(options: { dispatcher?: Dispatcher; connections?: number } = {}) {
    this.#owned = options.dispatcher === undefined;
    // Bounded: the translator issues many small calls; 32 sockets per origin keeps SQLite-backed
    // test servers and real API workers from being flooded.
    this.#dispatcher = options.dispatcher ?? createPool({ connections: options.connections ?? 32 });
  }

  async send(req: WireRequest): Promise<WireAnswer> {
    // Not a TransportError: a closed client is not worth retrying.
    if (this.#closed)
      throw new RavenError('ERR_CLOSED', `${req.method} ${req.url}: the OpenStack client is closed`);
    // No label: the caller's error names the call; this one says what happened on the wire.
    const res = await send(this.#dispatcher, {
      url: req.url,
      method: req.method,
      headers: req.headers,
      body: req.body ?? null,
      signal: req.signal,
      headersTimeoutMs: req.timeoutMs,
      bodyTimeoutMs: req.timeoutMs,
    });
    try {
      const text = await res.body.text();
      return { status: res.statusCode, headers: res.headers, text };
    } catch (err) {
      throw requestFailure(err, { signal: req.signal });
    }
  }

  /** Let in-flight requests finish, then close the pool (only a pool this exchange built). */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#owned) await this.#dispatcher.close();
  }

  /** Close every socket now; in-flight requests fail. */
  async destroy(err?: Error): Promise<void> {
    this.#closed = true;
    if (this.#owned) await this.#dispatcher.destroy(err ?? null);
  }
}
