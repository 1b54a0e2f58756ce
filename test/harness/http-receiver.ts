/**
 * A local HTTP receiver for sink tests (webhook, chat and CloudEvents endpoints): listens on
 * 127.0.0.1 at a port of its own, records every request (method, path, headers, raw and parsed
 * body) and answers from a script.
 *
 * - `reply(...answers)` queues answers for the next requests, in order; after the queue runs out
 *   every request gets `fallback` (200, empty body, unless changed). `assertConsumed()` fails a
 *   test whose script was not fully used.
 * - An answer may be slow (`delayMs`), and `slow(ms)` delays every answer.
 * - `down()` closes the listening socket and every open connection, so new connections are
 *   refused; `up()` listens again on the same port.
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

export interface ReceivedRequest {
  method: string;
  /** Path with query. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact body text, for signature checks. */
  raw: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
  /** Date.now() when the body had arrived. */
  at: number;
  /**
   * The answer was written to the connection in full. False while it is pending, and for good
   * when the connection was cut first (`down()`): the sender never learnt the request arrived.
   */
  answered: boolean;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** A string is sent as it is; anything else as JSON. */
  body?: unknown;
  /** Wait before answering. */
  delayMs?: number;
}

export class HttpReceiver {
  readonly requests: ReceivedRequest[] = [];
  /** The answer once the script is used up. */
  fallback: Answer = { status: 200 };
  #server: Server;
  #port = 0;
  #script: Answer[] = [];
  #slowMs = 0;
  #sockets = new Set<Socket>();
  #waiters: { count: number; resolve: () => void }[] = [];

  private constructor() {
    this.#server = this.#createServer();
  }

  /** Start on a free port of 127.0.0.1. */
  static async start(): Promise<HttpReceiver> {
    const receiver = new HttpReceiver();
    await receiver.#listen(0);
    return receiver;
  }

  get port(): number {
    return this.#port;
  }

  /** `http://127.0.0.1:<port>`; append a path for a sink's URL. */
  get origin(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  url(path = '/'): string {
    return `${this.origin}${path.startsWith('/') ? path : `/${path}`}`;
  }

  /** Queue answers for the next requests, in order. */
  reply(...answers: Answer[]): void {
    this.#script.push(...answers);
  }

  /** Delay every answer by `ms` (0 to stop). */
  slow(ms: number): void {
    this.#slowMs = ms;
  }

  /** Answers queued by `reply` and not used yet. */
  get unusedAnswers(): number {
    return this.#script.length;
  }

  assertConsumed(): void {
    if (this.#script.length > 0)
      throw new Error(
        `the receiver's script has ${this.#script.length} unused answer(s): ${JSON.stringify(this.#script)}`,
      );
  }

  /**
   * Resolve once `count` requests in all have arrived; reject after `timeoutMs`, a safety net far
   * above the milliseconds a local request takes, even on a loaded machine.
   */
  async waitForRequests(count: number, timeoutMs = 60_000): Promise<ReceivedRequest[]> {
    if (this.requests.length < count) {
      const arrived = new Promise<void>((resolve) => this.#waiters.push({ count, resolve }));
      const timeout = delay(timeoutMs, 'timeout', { ref: false });
      if ((await Promise.race([arrived, timeout])) === 'timeout')
        throw new Error(`waited ${timeoutMs} ms for ${count} request(s); ${this.requests.length} arrived`);
    }
    return this.requests.slice(0, count);
  }

  /** Stop listening and cut every connection: new connections are refused until `up()`. */
  async down(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    if (this.#server.listening) await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Listen again on the same port. */
  async up(): Promise<void> {
    if (this.#server.listening) return;
    this.#server = this.#createServer();
    await this.#listen(this.#port);
  }

  async close(): Promise<void> {
    await this.down();
  }

  #createServer(): Server {
    const server = createServer((req, res) => {
      void this.#handle(req, res);
    });
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    return server;
  }

  async #listen(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, '127.0.0.1', () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    const address = this.#server.address();
    if (typeof address === 'object' && address !== null) this.#port = address.port;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      json = undefined;
    }
    const request: ReceivedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      raw,
      json,
      at: Date.now(),
      answered: false,
    };
    res.on('finish', () => (request.answered = true));
    this.requests.push(request);
    this.#waiters = this.#waiters.filter((w) => {
      if (this.requests.length < w.count) return true;
      w.resolve();
      return false;
    });
    const answer = this.#script.shift() ?? this.fallback;
    const wait = (answer.delayMs ?? 0) + this.#slowMs;
    if (wait > 0) await delay(wait);
    if (res.destroyed) return;
    const body =
      answer.body === undefined
        ? ''
        : typeof answer.body === 'string'
          ? answer.body
          : JSON.stringify(answer.body);
    res.writeHead(answer.status, {
      ...(typeof answer.body === 'object' ? { 'content-type': 'application/json' } : {}),
      ...answer.headers,
    });
    res.end(body);
  }
}
