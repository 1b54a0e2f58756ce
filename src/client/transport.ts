/**
 * The wire: one bounded, keep-alive connection pool per client (the project's HTTP core,
 * `http/`), TLS from the resolved configuration, credentials from the auth provider on every
 * request.
 *
 * Guarantees: at most `maxConnections` sockets to the apiserver (over HTTP/2, normally one, PINGed
 * so that a dead connection is found within 25 s); when the auth provider returns
 * a different client certificate (an exec plugin rotated it) a new pool is built for later
 * requests and the old one drains; network failures become {@link TransportError}s with the
 * cause, and an aborted request rejects with the signal's reason. Status codes are not
 * interpreted here: that is the client's job.
 */
import { Agent, buildConnector, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'undici/types/header.js';
import { TransportError } from '../errors/raven-error.js';
import { connectOptions, createPool, type PoolOptions } from '../http/http-pool.js';
import { requestFailure, send, type HttpRequest } from '../http/send.js';
import { systemClock, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import type { AuthProvider } from './auth/auth-provider.js';
import { H2_PING_INTERVAL_MS, watchConnectionHealth } from './connection-health.js';
import type { TlsConfig } from './resolved-config.js';

export interface TransportOptions {
  /** Server URL; a path prefix is kept and prepended to every request path. */
  server: string;
  tls: TlsConfig;
  proxyUrl?: string;
  auth: AuthProvider;
  userAgent: string;
  /** Sockets per origin; default 100 (enough for many watches plus requests, bounded for the apiserver). */
  maxConnections?: number;
  /** TCP+TLS connect timeout; default 10 000 ms. */
  connectTimeoutMs?: number;
  /**
   * Send long-lived streams (watches) over HTTP/2 where a TLS server offers it; default true. Every
   * watch then shares one connection, and PINGs find a dead one within 25 s (see
   * `connection-health.ts`). Other requests use HTTP/1.1. Not used through a proxy.
   */
  http2?: boolean;
  clock?: Clock;
  logger?: Logger;
}

export interface WireRequest {
  method: string;
  /** Path with query, relative to the server URL. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
  /** Inactivity limit between body chunks; 0 disables it (watches). */
  bodyTimeoutMs?: number;
  /**
   * A long-lived stream (a watch): sent over HTTP/2 where the server speaks it, on a connection
   * that is PINGed, so that a dead one is found within 25 s however quiet the stream is.
   */
  longLived?: boolean;
}

export interface WireResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Dispatcher.ResponseData['body'];
}

/**
 * Sends requests with credentials over a shared pool.
 *
 * @example
 * const transport = new Transport({ server, tls, auth, userAgent: 'kube-raven/0.1.0' });
 * const res = await transport.send({ method: 'GET', path: '/version' });
 */
export class Transport {
  readonly #options: TransportOptions;
  readonly #origin: string;
  readonly #basePath: string;
  readonly #logger: Logger;
  #pool: { certKey: string; dispatcher: Dispatcher; streams: Dispatcher } | undefined;
  #closed = false;

  constructor(options: TransportOptions) {
    this.#options = options;
    const url = new URL(options.server);
    this.#origin = url.origin;
    this.#basePath = url.pathname.replace(/\/+$/, '');
    this.#logger = options.logger ?? silentLogger;
  }

  /** Send one request; the response body must be consumed or destroyed by the caller. */
  async send(req: WireRequest): Promise<WireResponse> {
    if (this.#closed) throw new TransportError('the client is closed');
    try {
      const creds = await this.#options.auth.authenticate(req.signal);
      const pool = this.#dispatchers(creds.cert, creds.key);
      const options: HttpRequest = {
        url: { origin: this.#origin, path: this.#basePath + req.path },
        method: req.method,
        headers: { 'user-agent': this.#options.userAgent, ...req.headers, ...creds.headers },
        body: req.body ?? null,
        signal: req.signal,
        label: `${req.method} ${req.path}`,
        ...(req.bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs: req.bodyTimeoutMs }),
      };
      const overH2 = req.longLived === true && req.body === undefined && pool.streams !== pool.dispatcher;
      let res: Dispatcher.ResponseData;
      try {
        res = await send(overH2 ? pool.streams : pool.dispatcher, options);
      } catch (err) {
        // The apiserver answers a rejected credential over HTTP/2 with a GOAWAY next to the 401,
        // and the HTTP/2 client reports the GOAWAY instead of the answer. Ask once over HTTP/1.1
        // to learn what the server said (a 401 makes the client re-authenticate).
        if (!overH2 || req.signal?.aborted === true || !isGoAway(err)) throw err;
        res = await send(pool.dispatcher, options);
      }
      return { statusCode: res.statusCode, headers: res.headers, body: res.body };
    } catch (err) {
      throw requestFailure(err, { signal: req.signal, label: `${req.method} ${req.path}` });
    }
  }

  /** Let in-flight requests finish, then close every socket. */
  async close(): Promise<void> {
    this.#closed = true;
    const pool = this.#pool;
    if (pool !== undefined) await Promise.all(distinct(pool).map((d) => d.close()));
  }

  /** Close every socket now; in-flight requests fail. */
  async destroy(err?: Error): Promise<void> {
    this.#closed = true;
    const pool = this.#pool;
    if (pool !== undefined) await Promise.all(distinct(pool).map((d) => d.destroy(err ?? null)));
  }

  #dispatchers(
    cert: string | undefined,
    key: string | undefined,
  ): { certKey: string; dispatcher: Dispatcher; streams: Dispatcher } {
    const certKey = cert === undefined || key === undefined ? '' : `${cert}\0${key}`;
    if (this.#pool?.certKey === certKey) return this.#pool;
    const old = this.#pool;
    this.#pool = { certKey, ...this.#build(cert, key) };
    if (old !== undefined) {
      this.#logger.info({}, 'client certificate changed; new connections use the new certificate');
      for (const dispatcher of distinct(old)) {
        dispatcher.close().catch((e: unknown) => {
          this.#logger.debug({ err: String(e) }, 'closing the previous connection pool failed');
        });
      }
    }
    return this.#pool;
  }

  /** The pool for requests, and the one for long-lived streams (the same one through a proxy or without HTTP/2). */
  #build(cert: string | undefined, key: string | undefined): { dispatcher: Dispatcher; streams: Dispatcher } {
    const { tls, proxyUrl } = this.#options;
    const pool: PoolOptions = {
      connections: this.#options.maxConnections ?? 100,
      ...(this.#options.connectTimeoutMs === undefined
        ? {}
        : { connectTimeoutMs: this.#options.connectTimeoutMs }),
      tls: {
        insecureSkipVerify: tls.insecureSkipTlsVerify,
        ...(tls.ca === undefined ? {} : { ca: tls.ca }),
        ...(tls.serverName === undefined ? {} : { serverName: tls.serverName }),
        ...(cert === undefined || key === undefined ? {} : { cert, key }),
      },
      ...(proxyUrl === undefined ? {} : { proxyUrl }),
    };
    const dispatcher = createPool(pool);
    const http2 =
      proxyUrl === undefined && (this.#options.http2 ?? true) && this.#origin.startsWith('https:');
    if (!http2) return { dispatcher, streams: dispatcher };
    const clock = this.#options.clock ?? systemClock;
    const connector = buildConnector({ ...connectOptions(pool), allowH2: true });
    const checked: buildConnector.connector = (options, callback) => {
      connector(options, (...args) => {
        const socket = args[1];
        if (socket != null) {
          watchConnectionHealth(socket, {
            clock,
            onDead: (err) => this.#logger.warn({ err: err.message }, 'dead connection closed; reconnecting'),
          });
        }
        callback(...args);
      });
    };
    const streams = new Agent({
      connect: checked,
      connections: pool.connections,
      allowH2: true,
      pingInterval: H2_PING_INTERVAL_MS,
    });
    return { dispatcher, streams };
  }
}

function distinct(pool: { dispatcher: Dispatcher; streams: Dispatcher }): Dispatcher[] {
  return pool.streams === pool.dispatcher ? [pool.dispatcher] : [pool.dispatcher, pool.streams];
}

/** The HTTP/2 client's report of a GOAWAY that ended a request before its answer was read. */
function isGoAway(err: unknown): boolean {
  return err instanceof Error && /GOAWAY/.test(err.message);
}
