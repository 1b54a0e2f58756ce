/**
 * A loopback TCP proxy in front of the apiserver, owned by a test, to cut or stall connections on
 * demand: `cut()` resets every open connection (the client sees ECONNRESET mid-stream), `stall()`
 * stops reading in both directions while keeping sockets open — bytes are held back by TCP flow
 * control, never dropped, as on a half-open connection — until `resume()`; `refuse()` makes new
 * connections fail until `accept()`.
 *
 * For the recovery benchmark: `stall({ newConnections: 'flow' })` holds only the connections open
 * now and lets new ones through, so a client that gives up on a dead connection can recover;
 * `closePort()` closes the listening socket (new connections fail with ECONNREFUSED, which the
 * proxy cannot count) until `reopenPort()`. `connections`, `refused` and `abandoned` count what
 * the clients did.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

interface Pair {
  client: Socket;
  upstream: Socket;
  /** Set while the pair is held by `stall({ newConnections: 'flow' })`: the client's bytes, kept. */
  held: Buffer[] | undefined;
}

export interface StallOptions {
  /**
   * `stall` (the default): connections opened during the stall are stalled too. `flow`: only the
   * connections open now are held; new ones are forwarded.
   */
  newConnections?: 'stall' | 'flow';
}

export class TcpProxy {
  #server: Server;
  readonly #port: number;
  readonly #target: { host: string; port: number };
  readonly #pairs = new Set<Pair>();
  #stalled = false;
  #refusing = false;
  /** Connections accepted so far. */
  connections = 0;
  /** Connections reset at once because the proxy was refusing (`refuse()`). */
  refused = 0;
  /** Held connections (`stall({ newConnections: 'flow' })`) that the client closed. */
  abandoned = 0;

  private constructor(server: Server, port: number, target: { host: string; port: number }) {
    this.#server = server;
    this.#port = port;
    this.#target = target;
  }

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const server = await listen(0);
    const addr = server.address();
    const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
    const proxy = new TcpProxy(server, port, target);
    proxy.#serve(server);
    return proxy;
  }

  get port(): number {
    return this.#port;
  }

  /** Number of connections currently open through the proxy. */
  get open(): number {
    return this.#pairs.size;
  }

  /** Number of connections currently held by `stall({ newConnections: 'flow' })`. */
  get held(): number {
    let n = 0;
    for (const pair of this.#pairs) if (pair.held !== undefined) n++;
    return n;
  }

  #serve(server: Server): void {
    server.on('connection', (client) => {
      this.#accept(client);
    });
  }

  #accept(client: Socket): void {
    if (this.#refusing) {
      this.refused++;
      client.resetAndDestroy();
      return;
    }
    this.connections++;
    const upstream = connect(this.#target.port, this.#target.host);
    const pair: Pair = { client, upstream, held: undefined };
    this.#pairs.add(pair);
    const drop = (): void => {
      if (!this.#pairs.delete(pair)) return;
      if (pair.held !== undefined) this.abandoned++;
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.on('data', (chunk: Buffer) => {
      if (pair.held === undefined) upstream.write(chunk);
      else pair.held.push(chunk);
    });
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

  /**
   * Forward nothing in either direction (new connections included, unless `newConnections` is
   * `flow`) while keeping sockets open. With `flow`, the held connections are still read on the
   * client's side, their bytes kept for `resume()`, so that the proxy sees a client give up on one.
   */
  stall(options: StallOptions = {}): void {
    if (options.newConnections === 'flow') {
      for (const pair of this.#pairs) {
        pair.held ??= [];
        pair.upstream.pause();
      }
      return;
    }
    this.#stalled = true;
    for (const { client, upstream } of this.#pairs) {
      client.pause();
      upstream.pause();
    }
  }

  resume(): void {
    this.#stalled = false;
    for (const pair of this.#pairs) {
      if (pair.held !== undefined) {
        for (const chunk of pair.held) pair.upstream.write(chunk);
        pair.held = undefined;
      }
      pair.client.resume();
      pair.upstream.resume();
    }
  }

  /** Reset new connections at once until accept() is called. */
  refuse(): void {
    this.#refusing = true;
  }

  accept(): void {
    this.#refusing = false;
  }

  /** Stop listening: new connections fail with ECONNREFUSED until reopenPort(). Open ones stay. */
  closePort(): void {
    this.#server.close();
  }

  /** Listen again on the same port. */
  async reopenPort(): Promise<void> {
    if (this.#server.listening) return;
    this.#server = await listen(this.#port);
    this.#serve(this.#server);
  }

  async close(): Promise<void> {
    this.cut();
    if (!this.#server.listening) return;
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

function listen(port: number): Promise<Server> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
