/**
 * The wire: one bounded, keep-alive undici connection pool per client, TLS from the resolved
 * configuration, credentials from the auth provider on every request.
 *
 * Guarantees: at most `maxConnections` sockets to the apiserver; when the auth provider returns
 * a different client certificate (an exec plugin rotated it) a new pool is built for later
 * requests and the old one drains; network failures become {@link TransportError}s with the
 * cause, and an aborted request rejects with the signal's reason. Status codes are not
 * interpreted here: that is the client's job.
 */
import { Agent, ProxyAgent, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'undici/types/header.js';
import { RavenError, TransportError } from '../errors/raven-error.js';
import { silentLogger, type Logger } from '../util/logger.js';
import type { AuthProvider } from './auth/auth-provider.js';
import type { TlsConfig } from './resolved-config.js';
import { abortReason } from './signals.js';

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
  #pool: { certKey: string; dispatcher: Dispatcher } | undefined;
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
      const dispatcher = this.#dispatcher(creds.cert, creds.key);
      const res = await dispatcher.request({
        origin: this.#origin,
        path: this.#basePath + req.path,
        method: req.method,
        headers: { 'user-agent': this.#options.userAgent, ...req.headers, ...creds.headers },
        body: req.body ?? null,
        signal: req.signal ?? null,
        ...(req.bodyTimeoutMs === undefined ? {} : { bodyTimeout: req.bodyTimeoutMs }),
      });
      return { statusCode: res.statusCode, headers: res.headers, body: res.body };
    } catch (err) {
      throw wireError(err, req);
    }
  }

  /** Let in-flight requests finish, then close every socket. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#pool?.dispatcher.close();
  }

  /** Close every socket now; in-flight requests fail. */
  async destroy(err?: Error): Promise<void> {
    this.#closed = true;
    await this.#pool?.dispatcher.destroy(err ?? null);
  }

  #dispatcher(cert: string | undefined, key: string | undefined): Dispatcher {
    const certKey = cert === undefined || key === undefined ? '' : `${cert}\0${key}`;
    if (this.#pool?.certKey === certKey) return this.#pool.dispatcher;
    const old = this.#pool;
    this.#pool = { certKey, dispatcher: this.#build(cert, key) };
    if (old !== undefined) {
      this.#logger.info({}, 'client certificate changed; new connections use the new certificate');
      old.dispatcher.close().catch((e: unknown) => {
        this.#logger.debug({ err: String(e) }, 'closing the previous connection pool failed');
      });
    }
    return this.#pool.dispatcher;
  }

  #build(cert: string | undefined, key: string | undefined): Dispatcher {
    const { tls, proxyUrl } = this.#options;
    const connect = {
      timeout: this.#options.connectTimeoutMs ?? 10_000,
      rejectUnauthorized: !tls.insecureSkipTlsVerify,
      ...(tls.ca === undefined ? {} : { ca: tls.ca }),
      ...(tls.serverName === undefined ? {} : { servername: tls.serverName }),
      ...(cert === undefined || key === undefined ? {} : { cert, key }),
    };
    const pool = { connections: this.#options.maxConnections ?? 100, pipelining: 1 };
    if (proxyUrl !== undefined) return new ProxyAgent({ uri: proxyUrl, requestTls: connect, ...pool });
    return new Agent({ connect, ...pool });
  }
}

function wireError(err: unknown, req: WireRequest): Error {
  if (req.signal?.aborted === true) return abortReason(req.signal);
  if (err instanceof RavenError) return err;
  const cause = err as Error & { code?: string };
  const code = cause.code === undefined ? '' : ` (${cause.code})`;
  return new TransportError(`${req.method} ${req.path}: ${cause.message}${code}`, { cause: err });
}
