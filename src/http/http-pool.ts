/**
 * The one undici core every HTTP caller in Raven builds on: the Kubernetes client
 * (`client/transport.ts`), the OpenStack client (`openstack/http-exchange.ts`) and the HTTP sinks
 * (`raven/sinks/http-post.ts`).
 *
 * A pool is an undici `Agent`: one keep-alive connection pool per origin, a bounded number of
 * sockets per origin, a connect timeout, and TLS settings for every connection it opens (or a
 * `ProxyAgent` that tunnels through `proxyUrl`). Callers own the pools they create and close them
 * with the component that uses them; there is no module-global pool.
 */
import { Agent, ProxyAgent, type Dispatcher, type buildConnector } from 'undici';

/** TLS for the connections a pool opens; PEM strings. */
export interface PoolTls {
  /** Trusted CAs instead of Node's default set. */
  ca?: string | Buffer;
  /** Client certificate and key (both or neither). */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** The name to verify the server's certificate against, when it differs from the host. */
  serverName?: string;
  /** Skip verification of the server's certificate (never by default). */
  insecureSkipVerify?: boolean;
}

export interface PoolOptions {
  /** Sockets per origin. */
  connections: number;
  /** TCP (+TLS) connect timeout. Default 10 000 ms: a reachable server answers in well under a second. */
  connectTimeoutMs?: number;
  /** How long an idle kept-alive socket is kept. Default undici's (4 s). */
  keepAliveTimeoutMs?: number;
  tls?: PoolTls;
  /** An HTTP(S) proxy to tunnel through. */
  proxyUrl?: string;
}

/** Default connect timeout, shared by every pool. */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The connect options of a pool: timeout and TLS, for undici's `connect` or `buildConnector`.
 *
 * @example
 * const connect = connectOptions({ connectTimeoutMs: 5_000, tls: { ca, serverName: 'kubernetes' } });
 * // { timeout: 5000, ca, servername: 'kubernetes' }: undici's buildConnector({ ...connect, allowH2: true })
 */
export function connectOptions(options: Omit<PoolOptions, 'connections'>): buildConnector.BuildOptions {
  const tls = options.tls ?? {};
  return {
    timeout: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    ...(tls.insecureSkipVerify === true ? { rejectUnauthorized: false } : {}),
    ...(tls.ca === undefined ? {} : { ca: tls.ca }),
    ...(tls.serverName === undefined ? {} : { servername: tls.serverName }),
    ...(tls.cert === undefined || tls.key === undefined ? {} : { cert: tls.cert, key: tls.key }),
  };
}

/**
 * A keep-alive pool per origin with the given bounds and TLS.
 *
 * @example
 * const pool = createPool({ connections: 16, keepAliveTimeoutMs: 30_000 });
 * try {
 *   const response = await pool.request({ origin: 'https://example.org', path: '/', method: 'GET' });
 *   await response.body.text();
 * } finally {
 *   await pool.close();
 * }
 */
export function createPool(options: PoolOptions): Dispatcher {
  const connect = connectOptions(options);
  const pool = {
    connections: options.connections,
    ...(options.keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeout: options.keepAliveTimeoutMs }),
  };
  if (options.proxyUrl !== undefined)
    return new ProxyAgent({ uri: options.proxyUrl, requestTls: connect, ...pool });
  return new Agent({ connect, ...pool });
}
