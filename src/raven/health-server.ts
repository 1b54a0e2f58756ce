/**
 * /healthz (the process answers), /readyz (every watcher has synced and none is failing; 503 with
 * the reasons otherwise) and /metrics (Prometheus text format), on one small HTTP server; and,
 * when configured, the web view below its path (`/ui` redirects to `/ui/`, whose page finds its
 * feed at `/ui/events` by a relative URL).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { RavenError } from '../errors/raven-error.js';
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface Readiness {
  ready: boolean;
  /** Per component: what is missing, for humans reading /readyz. */
  details: Record<string, string>;
}

/** Requests served below a path (the web view, provided by a layer above). */
export interface MountedRoutes {
  /** Answer `req`; `path` is its path below the mount point, starting with `/`. */
  handle(req: IncomingMessage, res: ServerResponse, path: string): void;
  /** End long-lived responses before the server closes. */
  close(): void;
}

export class HealthServer {
  readonly #server: Server;
  readonly #ui: MountedRoutes | undefined;

  private constructor(server: Server, ui: MountedRoutes | undefined) {
    this.#server = server;
    this.#ui = ui;
  }

  static async start(options: {
    address: string;
    port: number;
    registry: Registry;
    readiness: () => Readiness;
    /** The web view and where it is mounted, e.g. `/ui`. */
    ui?: { path: string; routes: MountedRoutes };
  }): Promise<HealthServer> {
    const ui = options.ui;
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (ui !== undefined && path === ui.path) {
        // The browser keeps the #token fragment across the redirect.
        res.writeHead(308, { location: `${ui.path}/` }).end();
        return;
      }
      if (ui !== undefined && path.startsWith(`${ui.path}/`)) {
        ui.routes.handle(req, res, path.slice(ui.path.length));
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD' }).end();
        return;
      }
      if (path === '/healthz' || path === '/livez') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
        return;
      }
      if (path === '/readyz') {
        const { ready, details } = options.readiness();
        res
          .writeHead(ready ? 200 : 503, { 'content-type': 'application/json' })
          .end(`${JSON.stringify({ ready, details }, null, 2)}\n`);
        return;
      }
      if (path === '/metrics') {
        options.registry.metrics().then(
          (text) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(text),
          (err: unknown) => res.writeHead(500).end(String(err)),
        );
        return;
      }
      res
        .writeHead(404, { 'content-type': 'text/plain' })
        .end(`not found: try /healthz, /readyz or /metrics${ui === undefined ? '' : ` or ${ui.path}/`}\n`);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        const where = `${options.address}:${options.port}`;
        if (err.code === 'EADDRINUSE')
          reject(
            new RavenError(
              'ERR_ADDRESS_IN_USE',
              `cannot serve /healthz, /readyz and /metrics on ${where}: the port is in use by another program; set server.port (0 picks a free port) or server.enabled: false`,
              { cause: err },
            ),
          );
        else if (err.code === 'EADDRNOTAVAIL' || err.code === 'EACCES')
          reject(
            new RavenError(
              'ERR_ADDRESS_IN_USE',
              `cannot serve /healthz, /readyz and /metrics on ${where}: ${err.code === 'EACCES' ? 'permission denied (ports below 1024 need privileges)' : 'no such address on this machine'}; set server.address and server.port`,
              { cause: err },
            ),
          );
        else reject(err);
      });
      server.listen(options.port, options.address, () => resolve());
    });
    return new HealthServer(server, ui?.routes);
  }

  get url(): string {
    const { address, port, family } = this.#server.address() as AddressInfo;
    return `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;
  }

  async close(): Promise<void> {
    this.#ui?.close();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
