/**
 * A local HTTP(S) server on 127.0.0.1 that plays a script: each incoming request is handed to
 * the next step in order, and recorded. Tests call `assertConsumed()` so an unplayed step fails.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after } from 'node:test';
import type { FakeClock } from '../../../src/testing/fake-clock.js';
import type { AuthProvider, Credentials } from '../../../src/client/auth/auth-provider.js';
import type { ResolvedConfig } from '../../../src/client/resolved-config.js';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Step = (req: IncomingMessage, res: ServerResponse, body: string) => void;

export interface TestServer {
  url: string;
  requests: Recorded[];
  /** Append steps to the script. */
  play(...steps: Step[]): void;
  assertConsumed(): void;
}

/** Start a scripted server (HTTPS when `tls` is given); it is closed when the test file ends. */
export async function startServer(tls?: ServerOptions): Promise<TestServer> {
  const steps: Step[] = [];
  const requests: Recorded[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const step = steps.shift();
      if (step === undefined) {
        res.writeHead(599).end('unexpected request: the script is exhausted');
        return;
      }
      step(req, res, body);
    });
  };
  const server: Server = tls === undefined ? createServer(handler) : createHttpsServer(tls, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    requests,
    play: (...more) => steps.push(...more),
    assertConsumed: () => {
      assert.equal(steps.length, 0, `${steps.length} scripted step(s) were not played`);
    },
  };
}

/** A step answering `status` with a JSON body and extra headers. */
export function reply(status: number, body: unknown, headers: Record<string, string> = {}): Step {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };
}

/** A Kubernetes Status body. */
export function status(code: number, reason: string, message: string): object {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message };
}

/** An auth provider that hands out `token-<n>`, n counting invalidations; it records calls. */
export class CountingAuth implements AuthProvider {
  readonly kind = 'test';
  invalidations = 0;
  cert: { cert: string; key: string }[] = [];

  authenticate(): Promise<Credentials> {
    const pair = this.cert[Math.min(this.invalidations, this.cert.length - 1)];
    return Promise.resolve({
      headers: { authorization: `Bearer token-${this.invalidations + 1}` },
      ...(pair === undefined ? {} : pair),
    });
  }

  invalidate(): void {
    this.invalidations++;
  }
}

/** A resolved configuration pointing at `server`. */
export function configFor(server: string, auth: AuthProvider, ca?: string): ResolvedConfig {
  return {
    server,
    namespace: 'test-ns',
    tls: { insecureSkipTlsVerify: false, ...(ca === undefined ? {} : { ca }) },
    auth,
    source: { kind: 'in-cluster', directory: '/nowhere', host: '127.0.0.1', port: '0' },
  };
}

/** Wait (on real event-loop turns, never on time) until `cond` holds. */
export async function until(cond: () => boolean, turns = 100_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  assert.fail('condition never became true');
}

/**
 * Settle `promise`, firing the FakeClock's short timers (retry sleeps) as they are scheduled;
 * timers due later than `horizonMs` (request deadlines) are left alone.
 */
export async function drive<T>(promise: Promise<T>, clock: FakeClock, horizonMs = 10_000): Promise<T> {
  const state = { done: false };
  promise.then(
    () => (state.done = true),
    () => (state.done = true),
  );
  const shortTimer = (): boolean => {
    const due = clock.nextDue();
    return due !== undefined && due - clock.now() < horizonMs;
  };
  const settled = (): boolean => state.done;
  while (!settled()) {
    await until(() => settled() || shortTimer());
    const due = clock.nextDue();
    if (!settled() && due !== undefined) await clock.tick(due - clock.now());
  }
  return promise;
}
