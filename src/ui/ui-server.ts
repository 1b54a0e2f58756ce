/**
 * Serves the web view: the page at `/`, its feed as Server-Sent Events at `/events`, and the
 * watchers' health as JSON at `/api/health` (below the mount point: the daemon serves them under
 * `server.ui.path` on its health server). One small HTTP server on loopback unless told
 * otherwise; nothing is fetched from elsewhere (the page is self-contained).
 *
 * With a token, `/events` and `/api/health` answer only to `Authorization: Bearer <token>` or
 * `?access_token=<token>` (EventSource cannot set headers; the page reads the token from its URL's
 * fragment, which browsers never send). The page itself holds no data and is served to anyone.
 *
 * SSE: each change is `event: change` with `id: <seq>`, so a browser that reconnects sends
 * `Last-Event-ID` and gets what it missed; `event: health` every second; a comment line every
 * 15 s keeps proxies from closing an idle stream.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { RavenError } from '../errors/raven-error.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import type { UiFeed, UiMessage } from './ui-feed.js';
import { uiPage } from './ui-page.js';

export interface UiServerOptions extends UiRoutesOptions {
  address: string;
  port: number;
  /** Named in the error for a busy port, e.g. `--port`. */
  portSetting?: string;
}

const HEALTH_EVERY_MS = 1_000;
const KEEPALIVE_EVERY_MS = 15_000;

/** What {@link UiRoutes} needs: the feed, the clock for its timers, and the token if any. */
export interface UiRoutesOptions {
  feed: UiFeed;
  clock: Clock;
  /** Required on the feed and health endpoints when set. */
  token?: string;
}

/**
 * The web view's requests, for any HTTP server: `raven ui` mounts them at `/`, the daemon at its
 * `server.ui.path`. The page finds its feed by relative URLs, so it must be served at a path that
 * ends in `/`.
 */
export class UiRoutes {
  readonly #options: UiRoutesOptions;
  readonly #closers = new Set<() => void>();

  constructor(options: UiRoutesOptions) {
    this.#options = options;
  }

  /** Answer `req`; `path` is its path below the mount point, starting with `/`. */
  handle(req: IncomingMessage, res: ServerResponse, path: string): void {
    const options = this.#options;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/' || path === '/index.html') {
      res
        .writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          // Everything the page needs is inline; nothing may be loaded from elsewhere.
          'content-security-policy':
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:",
          'cache-control': 'no-store',
        })
        .end(uiPage());
      return;
    }
    if (path !== '/events' && path !== '/api/health') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /, /events or /api/health\n');
      return;
    }
    if (!authorized(req, new URL(req.url ?? '/', 'http://localhost'), options.token)) {
      res
        .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' })
        .end('a token is required: open the page as http://HOST:PORT/PATH/#token=TOKEN\n');
      return;
    }
    if (path === '/api/health') {
      res
        .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
        .end(`${JSON.stringify(options.feed.health())}\n`);
      return;
    }
    this.#stream(req, res);
  }

  /** End every open feed stream (before the server closes). */
  close(): void {
    for (const close of this.#closers) close();
  }

  #stream(req: IncomingMessage, res: ServerResponse): void {
    const { feed, clock } = this.#options;
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    const send = (message: UiMessage | { event: 'health'; data: unknown }): void => {
      const id = message.event === 'change' ? `id: ${message.data.seq}\n` : '';
      res.write(`${id}event: ${message.event}\ndata: ${JSON.stringify(message.data)}\n\n`);
    };
    // Reconnect quickly: raven restarting is the usual reason a stream ends.
    res.write('retry: 1000\n\n');
    const last = Number(
      req.headers['last-event-id'] ?? new URL(req.url ?? '/', 'http://x').searchParams.get('after'),
    );
    const unsubscribe = feed.subscribe(Number.isInteger(last) && last > 0 ? last : 0, send);
    send({ event: 'health', data: feed.health() });
    let health: TimerHandle | undefined;
    let keepalive: TimerHandle | undefined;
    const tickHealth = (): void => {
      send({ event: 'health', data: feed.health() });
      health = clock.setTimeout(tickHealth, HEALTH_EVERY_MS, { background: true });
    };
    const tickKeepalive = (): void => {
      res.write(': keep-alive\n\n');
      keepalive = clock.setTimeout(tickKeepalive, KEEPALIVE_EVERY_MS, { background: true });
    };
    health = clock.setTimeout(tickHealth, HEALTH_EVERY_MS, { background: true });
    keepalive = clock.setTimeout(tickKeepalive, KEEPALIVE_EVERY_MS, { background: true });
    const close = (): void => {
      unsubscribe();
      if (health !== undefined) clock.clearTimeout(health);
      if (keepalive !== undefined) clock.clearTimeout(keepalive);
      this.#closers.delete(close);
      res.end();
    };
    this.#closers.add(close);
    req.once('close', close);
  }
}

/** `raven ui`'s own server: the web view at `/`. */
export class UiServer {
  readonly #server: Server;
  readonly #routes: UiRoutes;

  private constructor(server: Server, routes: UiRoutes) {
    this.#server = server;
    this.#routes = routes;
  }

  /** Listen; rejects with `ERR_ADDRESS_IN_USE` naming `portSetting` when the port is taken. */
  static async start(options: UiServerOptions): Promise<UiServer> {
    const server = createServer();
    const routes = new UiRoutes(options);
    server.on('request', (req: IncomingMessage, res: ServerResponse) =>
      routes.handle(req, res, new URL(req.url ?? '/', 'http://localhost').pathname),
    );
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        const where = `${options.address}:${options.port}`;
        const setting = options.portSetting ?? '--port';
        if (err.code === 'EADDRINUSE')
          reject(
            new RavenError(
              'ERR_ADDRESS_IN_USE',
              `cannot serve the web view on ${where}: the port is in use by another program; choose another with ${setting} (0 picks a free one)`,
              { cause: err },
            ),
          );
        else reject(err);
      });
      server.listen(options.port, options.address, () => resolve());
    });
    return new UiServer(server, routes);
  }

  get url(): string {
    const { address, port, family } = this.#server.address() as AddressInfo;
    return `http://${family === 'IPv6' ? `[${address}]` : address}:${port}/`;
  }

  async close(): Promise<void> {
    this.#routes.close();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

function authorized(req: IncomingMessage, url: URL, token: string | undefined): boolean {
  if (token === undefined) return true;
  const header = req.headers.authorization;
  const given =
    header?.startsWith('Bearer ') === true ? header.slice(7) : url.searchParams.get('access_token');
  if (given === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
