import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { ApiError } from '../../../src/errors/api-error.js';
import { isNotFound, isTooManyRequests, isUnauthorized } from '../../../src/errors/classify.js';
import { TransportError } from '../../../src/errors/raven-error.js';
import { KubeClient } from '../../../src/client/kube-client.js';
import { version } from '../../../src/client/version.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { configFor, CountingAuth, drive, reply, startServer, status, until } from './test-server.js';

async function setup(options: { maxAttempts?: number } = {}) {
  const server = await startServer();
  const auth = new CountingAuth();
  const clock = new FakeClock();
  const client = new KubeClient(configFor(server.url, auth), { clock, ...options });
  return { server, auth, clock, client };
}

test('a request sends JSON with credentials, user agent and query, and decodes the answer', async () => {
  const { server, client } = await setup();
  server.play(reply(201, { kind: 'ConfigMap', metadata: { name: 'x' } }));
  const result = await client.request<{ kind: string }>({
    method: 'POST',
    path: '/api/v1/namespaces/ns/configmaps',
    query: { fieldManager: 'raven test', dryRun: undefined, limit: 5 },
    body: { kind: 'ConfigMap' },
  });
  assert.deepEqual(result, { kind: 'ConfigMap', metadata: { name: 'x' } });
  const [req] = server.requests;
  assert.equal(req?.url, '/api/v1/namespaces/ns/configmaps?fieldManager=raven%20test&limit=5');
  assert.equal(req.headers.authorization, 'Bearer token-1');
  assert.equal(req.headers['user-agent'], `kube-raven/${version}`);
  assert.equal(req.headers['content-type'], 'application/json');
  assert.equal(req.body, '{"kind":"ConfigMap"}');
  assert.equal(client.namespace, 'test-ns');
  assert.equal(client.server, server.url);
  server.assertConsumed();
  await client.close();
});

test('a 429 is retried after its Retry-After on the injected clock', async () => {
  const { server, clock, client } = await setup();
  server.play(
    reply(429, status(429, 'TooManyRequests', 'slow down'), { 'retry-after': '3' }),
    reply(200, { ok: 1 }),
  );
  const start = clock.now();
  const pending = client.request({ method: 'GET', path: '/api/v1/pods' });
  await until(() => clock.nextDue() === clock.now() + 3_000);
  assert.equal(server.requests.length, 1);
  await clock.tick(3_000);
  assert.deepEqual(await pending, { ok: 1 });
  assert.equal(clock.now() - start, 3_000);
  assert.equal(server.requests.length, 2);
  server.assertConsumed();
  await client.close();
});

test('429 retries are bounded and the last answer is thrown as an ApiError', async () => {
  const { server, clock, client } = await setup({ maxAttempts: 3 });
  const throttled = reply(429, status(429, 'TooManyRequests', 'slow down'), { 'retry-after': '1' });
  server.play(throttled, throttled, throttled);
  await assert.rejects(
    drive(client.request({ method: 'GET', path: '/api/v1/pods' }), clock),
    (err: unknown) => {
      assert.ok(isTooManyRequests(err));
      return true;
    },
  );
  assert.equal(server.requests.length, 3);
  server.assertConsumed();
  await client.close();
});

test('aborting during a 429 wait rejects at once without another request', async () => {
  const { server, clock, client } = await setup();
  server.play(reply(429, status(429, 'TooManyRequests', 'slow down'), { 'retry-after': '60' }));
  const ac = new AbortController();
  const pending = client.request({ method: 'GET', path: '/api/v1/pods', signal: ac.signal });
  await until(() => clock.nextDue() === clock.now() + 60_000);
  ac.abort();
  await assert.rejects(pending, { name: 'AbortError' });
  assert.equal(server.requests.length, 1);
  await client.close();
});

test('a stream answered 429 is not retried', async () => {
  const { server, client } = await setup();
  server.play(reply(429, status(429, 'TooManyRequests', 'slow down'), { 'retry-after': '1' }));
  await assert.rejects(client.stream({ path: '/api/v1/pods', query: { watch: true } }), (err: unknown) => {
    assert.ok(isTooManyRequests(err));
    assert.equal((err as ApiError).retryAfterSeconds, 1);
    return true;
  });
  assert.equal(server.requests.length, 1);
  await client.close();
});

test('a 401 invalidates the credentials and retries exactly once', async () => {
  const { server, auth, client } = await setup();
  server.play(reply(401, status(401, 'Unauthorized', 'Unauthorized')), reply(200, { ok: true }));
  assert.deepEqual(await client.request({ method: 'GET', path: '/api' }), { ok: true });
  assert.deepEqual(
    server.requests.map((r) => r.headers.authorization),
    ['Bearer token-1', 'Bearer token-2'],
  );
  server.play(
    reply(401, status(401, 'Unauthorized', 'Unauthorized')),
    reply(401, status(401, 'Unauthorized', 'still no')),
  );
  await assert.rejects(client.request({ method: 'GET', path: '/api' }), (err: unknown) =>
    isUnauthorized(err),
  );
  assert.equal(auth.invalidations, 2);
  assert.equal(server.requests.length, 4);
  server.assertConsumed();
  await client.close();
});

test('a stream answered 401 re-authenticates once and then streams', async () => {
  const { server, auth, client } = await setup();
  server.play(reply(401, status(401, 'Unauthorized', 'Unauthorized')), (_req, res) => {
    res.writeHead(200).end('{"type":"ADDED"}\n');
  });
  const res = await client.stream({ path: '/api/v1/pods', query: { watch: 1 } });
  let text = '';
  for await (const chunk of res.body) text += Buffer.from(chunk).toString();
  assert.equal(text, '{"type":"ADDED"}\n');
  assert.equal(auth.invalidations, 1);
  assert.equal(server.requests[1]?.url, '/api/v1/pods?watch=1');
  server.assertConsumed();
  await client.close();
});

test('a non-2xx answer becomes an ApiError carrying the Status, method and path but no credentials', async () => {
  const { server, client } = await setup();
  server.play(reply(404, status(404, 'NotFound', 'pods "web" not found')));
  await assert.rejects(
    client.request({ method: 'GET', path: '/api/v1/namespaces/a/pods/web' }),
    (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.ok(isNotFound(err));
      assert.equal(err.status.message, 'pods "web" not found');
      assert.deepEqual(err.request, { method: 'GET', path: '/api/v1/namespaces/a/pods/web' });
      assert.doesNotMatch(err.message, /token-1/);
      return true;
    },
  );
  await client.close();
});

test('a streamed body arrives incrementally and an abort ends it and closes the connection', async () => {
  const { server, client } = await setup();
  let closed: Promise<unknown> | undefined;
  server.play((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"type":"ADDED"}\n');
    closed = once(req.socket, 'close');
  });
  const ac = new AbortController();
  const res = await client.stream({ path: '/api/v1/pods', query: { watch: 1 }, signal: ac.signal });
  assert.equal(res.statusCode, 200);
  const iterator = res.body[Symbol.asyncIterator]();
  const first = await iterator.next();
  assert.equal(Buffer.from(first.value as Uint8Array).toString(), '{"type":"ADDED"}\n');
  const next = iterator.next();
  ac.abort();
  await assert.rejects(next, { name: 'AbortError' });
  await closed;
  await client.close();
});

test('a request without an answer fails with a TransportError at the deadline', async () => {
  const { server, clock, client } = await setup();
  server.play(() => {
    // Never answer.
  });
  const pending = client.request({ method: 'GET', path: '/slow', timeoutMs: 5_000 });
  const outcome = assert.rejects(pending, (err: unknown) => {
    assert.ok(err instanceof TransportError);
    assert.match(err.message, /GET \/slow: no complete response within 5000 ms/);
    return true;
  });
  await until(() => server.requests.length === 1);
  await clock.tick(5_000);
  await outcome;
  await client.destroy();
});

test('a refused connection is a TransportError with the cause', async () => {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, 'close');
  const client = new KubeClient(configFor(`http://127.0.0.1:${port}`, new CountingAuth()));
  await assert.rejects(client.request({ method: 'GET', path: '/api' }), (err: unknown) => {
    assert.ok(err instanceof TransportError);
    assert.match(err.message, /GET \/api: .*ECONNREFUSED/);
    assert.ok(err.cause instanceof Error);
    return true;
  });
  await client.close();
});

test('a server URL with a path prefix keeps the prefix on every request', async () => {
  const server = await startServer();
  const client = new KubeClient(configFor(`${server.url}/k8s/clusters/c1`, new CountingAuth()));
  server.play(reply(200, {}));
  await client.request({ method: 'GET', path: '/version' });
  assert.equal(server.requests[0]?.url, '/k8s/clusters/c1/version');
  await client.close();
});
