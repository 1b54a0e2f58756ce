/**
 * A loopback TCP proxy in front of the apiserver, owned by a test, to cut or stall connections on
 * demand: `cut()` resets every open connection (the client sees ECONNRESET mid-stream), `stall()`
 * stops reading in both directions while keeping sockets open — bytes are held back by TCP flow
 * control, never dropped, as on a half-open connection — until `resume()`; `refuse()` makes new
 * connections fail until `accept()`.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export class TcpProxy {
  readonly #server: Server;
  readonly #target: { host: string; port: number };
  readonly #pairs = new Set<{ client: Socket; upstream: Socket }>();
  #stalled = false;
  #refusing = false;
  /** Connections accepted so far. */
  connections = 0;

  private constructor(server: Server, target: { host: string; port: number }) {
    this.#server = server;
    this.#target = target;
  }

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const server = createServer();
    const proxy = new TcpProxy(server, target);
    server.on('connection', (client) => {
      proxy.#accept(client);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    const addr = this.#server.address();
    return typeof addr === 'object' && addr !== null ? addr.port : 0;
  }

  /** Number of connections currently open through the proxy. */
  get open(): number {
    return this.#pairs.size;
  }

  #accept(client: Socket): void {
    if (this.#refusing) {
      client.resetAndDestroy();
      return;
    }
    this.connections++;
    const upstream = connect(this.#target.port, this.#target.host);
    const pair = { client, upstream };
    this.#pairs.add(pair);
    const drop = (): void => {
      this.#pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    if (this.#stalled) {
      client.pause();
      upstream.pause();
    }
  }

  /** Reset every open connection. */
  cut(): void {
    for (const { client, upstream } of this.#pairs) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    this.#pairs.clear();
  }

  /** Forward nothing in either direction (new connections included) while keeping sockets open. */
  stall(): void {
    this.#stalled = true;
    for (const { client, upstream } of this.#pairs) {
      client.pause();
      upstream.pause();
    }
  }

  resume(): void {
    this.#stalled = false;
    for (const { client, upstream } of this.#pairs) {
      client.resume();
      upstream.resume();
    }
  }

  /** Reset new connections at once until accept() is called. */
  refuse(): void {
    this.#refusing = true;
  }

  accept(): void {
    this.#refusing = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
