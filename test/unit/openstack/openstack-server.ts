/**
 * A local HTTP server on 127.0.0.1 that plays canned Keystone, Neutron and Octavia answers in
 * order. Each step names the request it expects (`GET /v2.0/networks?tags=raven`); a request that
 * does not match the next step is answered 599 and recorded, so the test's assertions show it.
 * Tests call `assertConsumed()` so an unplayed step fails.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after } from 'node:test';
import type { FakeClock } from '../../../src/testing/fake-clock.js';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** The decoded JSON body, or undefined. */
  json: unknown;
}

export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

interface Step {
  /** `METHOD /path?query`; the query must match exactly when given, else it is ignored. */
  request: string;
  answer: Answer | ((req: Recorded) => Answer);
}

/** An answer that never comes: the request hangs until the client gives up. */
export const HANG: Answer = { status: 0 };

export interface OpenStackServer {
  url: string;
  requests: Recorded[];
  /** Append a step: the request it expects, and the answer. */
  on(request: string, answer: Answer | ((req: Recorded) => Answer)): OpenStackServer;
  assertConsumed(): void;
}

export async function startOpenStackServer(): Promise<OpenStackServer> {
  const steps: Step[] = [];
  const requests: Recorded[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      let json: unknown;
      try {
        json = body === '' ? undefined : JSON.parse(body);
      } catch {
        json = undefined;
      }
      const recorded: Recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        json,
      };
      requests.push(recorded);
      const step = steps[0];
      const line = `${recorded.method} ${recorded.url}`;
      if (step === undefined || !matches(step.request, line)) {
        res.writeHead(599).end(`unexpected request ${line}; expected ${step?.request ?? 'nothing'}`);
        return;
      }
      steps.shift();
      const answer = typeof step.answer === 'function' ? step.answer(recorded) : step.answer;
      if (answer === HANG) return;
      const text =
        answer.body === undefined
          ? ''
          : typeof answer.body === 'string'
            ? answer.body
            : JSON.stringify(answer.body);
      res
        .writeHead(answer.status, {
          ...(text === '' ? {} : { 'content-type': 'application/json' }),
          ...answer.headers,
        })
        .end(text);
    });
  };
  const server: Server = createServer(handler);
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
  const self: OpenStackServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    on(request, answer) {
      steps.push({ request, answer });
      return self;
    },
    assertConsumed() {
      assert.deepEqual(
        steps.map((s) => s.request),
        [],
        'scripted step(s) were not played',
      );
    },
  };
  return self;
}

function matches(expected: string, actual: string): boolean {
  if (expected.includes('?')) return expected === actual;
  return expected === actual.split('?')[0];
}

/**
 * Await `promise` while firing the fake clock's timers as they come due: retries and polls sleep
 * on the clock, between real requests to the local server.
 */
export async function drive<T>(promise: Promise<T>, clock: FakeClock): Promise<T> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  while (!settled) {
    const due = clock.nextDue();
    if (due === undefined) await new Promise<void>((resolve) => setImmediate(resolve));
    else await clock.tick(Math.max(0, due - clock.now()));
  }
  return promise;
}

/** A Neutron error body. */
export function neutronError(type: string, message: string, detail = ''): unknown {
  return { NeutronError: { type, message, detail } };
}

/** An Octavia (WSME) error body. */
export function octaviaFault(faultstring: string, faultcode = 'Client'): unknown {
  return { faultcode, faultstring, debuginfo: null };
}

/** A Keystone v3 token answer with a catalog. */
export function keystoneToken(options: {
  expiresAt: number;
  projectId?: string;
  catalog: { type: string; endpoints: { url: string; interface: string; region: string }[] }[];
  token?: string;
}): Answer {
  return {
    status: 201,
    headers: { 'x-subject-token': options.token ?? 'gAAAAAtoken' },
    body: {
      token: {
        methods: ['password'],
        expires_at: new Date(options.expiresAt).toISOString().replace('Z', '000Z'),
        issued_at: new Date(options.expiresAt - 3_600_000).toISOString(),
        user: {
          id: 'u1',
          name: 'raven',
          domain: { id: 'default', name: 'Default' },
          password_expires_at: null,
        },
        project: {
          id: options.projectId ?? 'p-42',
          name: 'raven',
          domain: { id: 'default', name: 'Default' },
        },
        roles: [{ id: 'r1', name: 'member' }],
        catalog: options.catalog.map((service, i) => ({
          id: `svc${i}`,
          type: service.type,
          name: service.type === 'network' ? 'neutron' : 'octavia',
          endpoints: service.endpoints.map((e, j) => ({
            id: `ep${i}${j}`,
            url: e.url,
            interface: e.interface,
            region: e.region,
            region_id: e.region,
          })),
        })),
      },
    },
  };
}
