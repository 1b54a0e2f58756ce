/**
 * A real local HTTP server that plays a named scenario, for fault tests. It exists only for the
 * faults a real apiserver cannot be made to produce on demand: a body split at awkward places, a
 * connection reset mid-stream, a half-open stream that stalls forever, a request that never gets
 * headers, an in-stream error or a malformed line at a chosen moment. Everything else is tested
 * against a real apiserver.
 *
 * A scenario is an ordered script. Each step asserts the next request (method, path, query) and
 * answers it: status, headers, then body chunks (each optionally after a delay or a condition),
 * then the end of the stream, a reset, or a stall; or the step hangs without sending headers. The
 * server knows nothing about watches.
 *
 * A step may answer several requests in a row (`times`), or every request from then on
 * (`times: Infinity`), for clients that are expected to retry an unbounded number of times.
 *
 * Every request is recorded. A request that does not match its step is answered 500 with the
 * reason and does not consume the step; a request after the script ended is held without an
 * answer (so a retrying client stays idle rather than spinning). Both are reported by
 * {@link ScriptedServer.assertDone}, which also fails when steps were left unconsumed.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { sleep, systemClock, type Clock } from '../../src/util/clock.js';

/** Checks on the query string. */
export interface QueryCheck {
  /** Parameters that must be present with exactly these values. */
  equals?: Readonly<Record<string, string>>;
  /** Parameters that must be present, with any value. */
  present?: readonly string[];
  /** Parameters that must be absent. */
  absent?: readonly string[];
  /** When true, no parameters other than those in `equals` and `present` are allowed. */
  only?: boolean;
  /** Anything else: answer a problem description, or undefined when the query is fine. */
  check?: (query: URLSearchParams) => string | undefined;
}

/** What the next request must look like. */
export interface ExpectedRequest {
  /** Default GET. */
  method?: string;
  /** The path without the query string, compared exactly. */
  path: string;
  query?: QueryCheck;
}

/**
 * A body chunk, or a pause before the next one (`{ delayMs, data }` does both): for a time, or until
 * a condition holds (`{ until, data }`, e.g. "the client has read the previous chunk", which a
 * delay cannot promise on a busy machine).
 */
export type BodyChunk =
  | string
  | Uint8Array
  | { delayMs: number; data?: string | Uint8Array }
  | { until: () => Promise<void>; data?: string | Uint8Array };

/** What happens after the last chunk: a normal end, a torn-down socket, or silence with the socket kept open. */
export type StreamEnd = 'end' | 'reset' | 'stall';

export interface ScriptedResponse {
  /** Default 200. */
  status?: number;
  /** Default `content-type: application/json`; the body is sent chunked unless content-length is set. */
  headers?: Readonly<Record<string, string>>;
  body?: readonly BodyChunk[];
  /** Default 'end'. */
  then?: StreamEnd;
}

export interface ScriptStep {
  /** Shown in failure messages. */
  name?: string;
  expect: ExpectedRequest;
  /** The answer, or 'hang': never send headers (the socket stays open until close()). */
  respond: ScriptedResponse | 'hang';
  /**
   * How many matching requests in a row this step answers before the script moves on; default 1.
   * `Infinity` answers every later request (nothing after it is ever reached) and counts as
   * consumed once it has answered one.
   */
  times?: number;
}

export interface Scenario {
  name: string;
  steps: readonly ScriptStep[];
}

/** A request as received. */
export interface RecordedRequest {
  method: string;
  path: string;
  /** The parsed query, last value winning; see `search` for repeated parameters. */
  query: Readonly<Record<string, string>>;
  search: URLSearchParams;
  /** Index of the step it consumed, or undefined when it matched none. */
  step: number | undefined;
  /** When it arrived, on the server's clock. */
  at: number;
}

export interface ScriptedServerOptions {
  /** Clock for chunk delays; default the system clock. */
  clock?: Clock;
}

/**
 * A running scenario.
 *
 * @example
 * const server = await ScriptedServer.start({
 *   name: 'reset mid-stream',
 *   steps: [{ expect: { path: '/api/v1/pods', query: { equals: { watch: '1' } } }, respond: { body: [line], then: 'reset' } }],
 * });
 * try { ...point a client at server.url...; server.assertDone(); } finally { await server.close(); }
 */
export class ScriptedServer {
  readonly scenario: Scenario;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[] = [];
  readonly #server: Server;
  readonly #clock: Clock;
  readonly #sockets = new Set<Socket>();
  readonly #problems: string[] = [];
  readonly #stop = new AbortController();
  #waiters: { count: number; resolve: () => void }[] = [];
  #next = 0;
  /** Requests the current step has answered. */
  #played = 0;

  private constructor(scenario: Scenario, options: ScriptedServerOptions) {
    this.scenario = scenario;
    this.#clock = options.clock ?? systemClock;
    this.#server = createServer((req, res) => {
      this.#handle(req, res);
    });
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  /** Start listening on 127.0.0.1 on a free port. */
  static async start(scenario: Scenario, options: ScriptedServerOptions = {}): Promise<ScriptedServer> {
    const server = new ScriptedServer(scenario, options);
    await new Promise<void>((resolve, reject) => {
      server.#server.once('error', reject);
      server.#server.listen(0, '127.0.0.1', () => {
        resolve();
      });
    });
    return server;
  }

  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  get url(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Resolves once at least `count` requests have arrived. */
  waitForRequests(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  /** Throws unless every step was consumed and every request matched its step. */
  assertDone(): void {
    const problems = [...this.#problems];
    // A repeated step that has begun answering is not "never requested"; unless unbounded, it is short.
    const current = this.scenario.steps[this.#next];
    const begun = current !== undefined && this.#played > 0;
    if (begun && (current.times ?? 1) !== Infinity) {
      const times = String(current.times ?? 1);
      problems.push(`${this.#describe(current, this.#next)} answered ${this.#played} of ${times} requests`);
    }
    const first = this.#next + (begun ? 1 : 0);
    const left = this.scenario.steps.length - first;
    if (left > 0) {
      const names = this.scenario.steps.slice(first).map((step, i) => this.#describe(step, first + i));
      problems.push(`${left} step(s) never requested: ${names.join(', ')}`);
    }
    if (problems.length > 0) {
      throw new Error(
        `scenario "${this.scenario.name}" did not play as scripted:\n- ${problems.join('\n- ')}`,
      );
    }
  }

  /** Stop listening and tear down every socket, including stalled and hanging ones. */
  async close(): Promise<void> {
    this.#stop.abort();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    req.resume();
    const url = new URL(req.url ?? '/', 'http://scripted.invalid');
    const method = req.method ?? 'GET';
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      search: url.searchParams,
      step: undefined,
      at: this.#clock.now(),
    };
    this.requests.push(record);
    this.#wake();
    const seen = `${method} ${url.pathname}${url.search}`;
    const step = this.scenario.steps[this.#next];
    if (step === undefined) {
      this.#problems.push(`request after the script ended: ${seen}`);
      return; // held unanswered until close()
    }
    const mismatch = requestProblem(step.expect, method, url);
    if (mismatch !== undefined) {
      const problem = `${this.#describe(step, this.#next)} got ${seen}: ${mismatch}`;
      this.#problems.push(problem);
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`scripted server: ${problem}\n`);
      return;
    }
    record.step = this.#next;
    this.#played++;
    if (this.#played >= (step.times ?? 1)) {
      this.#next++;
      this.#played = 0;
    }
    if (step.respond === 'hang') return;
    this.#play(res, step.respond).catch(() => {
      // The client went away or the server closed: nothing left to play to.
      res.destroy();
    });
  }

  async #play(res: ServerResponse, response: ScriptedResponse): Promise<void> {
    res.writeHead(response.status ?? 200, { 'content-type': 'application/json', ...response.headers });
    res.flushHeaders();
    for (const chunk of response.body ?? []) {
      const data = typeof chunk === 'string' || chunk instanceof Uint8Array ? chunk : chunk.data;
      if (typeof chunk === 'object' && 'delayMs' in chunk)
        await sleep(this.#clock, chunk.delayMs, this.#stop.signal);
      if (typeof chunk === 'object' && 'until' in chunk)
        await unlessStopped(chunk.until(), this.#stop.signal);
      if (data !== undefined && data.length > 0) await write(res, data);
    }
    switch (response.then ?? 'end') {
      case 'end':
        res.end();
        return;
      case 'reset':
        res.socket?.destroy();
        return;
      case 'stall':
        return; // the socket stays open, silent, until close()
    }
  }

  #describe(step: ScriptStep, index: number): string {
    return `step ${index + 1}${step.name === undefined ? '' : ` (${step.name})`}`;
  }

  #wake(): void {
    const ready = this.#waiters.filter((w) => this.requests.length >= w.count);
    this.#waiters = this.#waiters.filter((w) => this.requests.length < w.count);
    for (const waiter of ready) waiter.resolve();
  }
}

/** `promise`, or a rejection once the server is closed (so close() never waits on a condition). */
function unlessStopped(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.finally(() => signal.removeEventListener('abort', onAbort)).then(resolve, reject);
  });
}

function write(res: ServerResponse, data: string | Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    res.write(data, (err) => {
      if (err) reject(err);
      else resolve();
    });
  });
}

/** Why a request does not match `expected`, or undefined when it does. */
function requestProblem(expected: ExpectedRequest, method: string, url: URL): string | undefined {
  const wantMethod = expected.method ?? 'GET';
  if (method !== wantMethod) return `expected method ${wantMethod}`;
  if (url.pathname !== expected.path) return `expected path ${expected.path}`;
  return expected.query === undefined ? undefined : queryProblem(expected.query, url.searchParams);
}

function queryProblem(check: QueryCheck, query: URLSearchParams): string | undefined {
  for (const [name, value] of Object.entries(check.equals ?? {})) {
    const actual = query.get(name);
    if (actual !== value) {
      return `expected query ${name}=${value}, got ${actual === null ? 'no such parameter' : `${name}=${actual}`}`;
    }
  }
  for (const name of check.present ?? []) {
    if (!query.has(name)) return `expected query parameter ${name}`;
  }
  for (const name of check.absent ?? []) {
    if (query.has(name)) return `expected no query parameter ${name}, got ${name}=${query.get(name) ?? ''}`;
  }
  if (check.only === true) {
    const allowed = new Set([...Object.keys(check.equals ?? {}), ...(check.present ?? [])]);
    const extra = [...query.keys()].filter((name) => !allowed.has(name));
    if (extra.length > 0) return `unexpected query parameter(s) ${extra.join(', ')}`;
  }
  return check.check?.(query);
}
