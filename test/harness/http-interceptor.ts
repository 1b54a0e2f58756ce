/**
 * A loopback HTTP proxy in front of a real server, owned by a test, that passes every request
 * through except the ones an armed trap matches: for those it runs the trap's action (e.g.
 * SIGKILL the client) and drops the connection without forwarding, so the real server never sees
 * the call. It places a fault exactly between two calls a real server would have answered, which
 * the server itself cannot be asked to do. `seen` lists what came through.
 */
import {
  Agent,
  createServer,
  request,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';

export interface Trap {
  method: string;
  /** Matches the request path without its query string. */
  path: RegExp;
  /** Runs once, for the first matching request; the request is dropped. */
  action: () => void;
}

export class HttpInterceptor {
  readonly #server: Server;
  readonly #target: URL;
  /**
   * The proxy's own connections to the real server, closed with it. A forwarded answer whose
   * client went away (a SIGKILLed Raven) stops flowing and keeps its socket out of the pool: on the
   * shared global agent that socket held the test's process open until the server timed it out.
   */
  readonly #agent = new Agent({ keepAlive: true });
  #trap: Trap | undefined;
  /** Requests seen (forwarded or trapped), `METHOD path` without query. */
  readonly seen: string[] = [];

  private constructor(server: Server, target: URL) {
    this.#server = server;
    this.#target = target;
  }

  static async start(target: string): Promise<HttpInterceptor> {
    const server = createServer();
    const proxy = new HttpInterceptor(server, new URL(target));
    server.on('request', (req, res) => proxy.#handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get url(): string {
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('not listening');
    return `http://127.0.0.1:${address.port}`;
  }

  /** Trap the next request matching `trap`. */
  arm(trap: Trap): void {
    this.#trap = trap;
  }

  get armed(): boolean {
    return this.#trap !== undefined;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#agent.destroy();
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    this.seen.push(`${req.method ?? 'GET'} ${path}`);
    const trap = this.#trap;
    if (trap !== undefined && trap.method === req.method && trap.path.test(path)) {
      this.#trap = undefined;
      trap.action();
      req.socket.destroy();
      return;
    }
    const upstream = request(
      {
        agent: this.#agent,
        host: this.#target.hostname,
        port: this.#target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: this.#target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        // An answer cut short (its upstream dropped below) reports the cut as an error.
        answer.on('error', () => res.destroy());
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    // A client gone before its answer was through: the rest of the answer is not read, so the
    // upstream connection is dropped rather than left holding an unfinished response.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }
}
