import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isOpenStackUnavailable, isTooManyRequests } from '../../../src/errors/classify.js';
import type { CallRecord } from '../../../src/openstack/call-api.js';
import { createOpenStackClient } from '../../../src/openstack/openstack-client.js';
import { OpenStackError } from '../../../src/errors/openstack-error.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { HANG, drive, neutronError, startOpenStackServer } from './openstack-server.js';
import { noauthClient, testClient } from './helpers.js';

const unavailable = { status: 503, body: neutronError('ServiceUnavailable', 'try later') };

test('a GET is retried on 503 with growing delays and succeeds', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url);
  server
    .on('GET /network/v2.0/networks/n1', unavailable)
    .on('GET /network/v2.0/networks/n1', { status: 502, body: '<html>bad gateway</html>' })
    .on('GET /network/v2.0/networks/n1', { status: 200, body: { network: { id: 'n1' } } });
  const started = clock.now();
  assert.deepEqual(await drive(client.neutron.networks.get('n1'), clock), { id: 'n1' });
  server.assertConsumed();
  // No jitter (random() = 0): half of 250 ms, then half of 500 ms.
  assert.equal(clock.now() - started, 125 + 250);
});

test('retries are bounded: the last failure is thrown after maxAttempts', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url, {
    retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 150 },
  });
  server
    .on('DELETE /network/v2.0/ports/p1', unavailable)
    .on('DELETE /network/v2.0/ports/p1', unavailable)
    .on('DELETE /network/v2.0/ports/p1', unavailable);
  const started = clock.now();
  await assert.rejects(drive(client.neutron.ports.delete('p1'), clock), (err: unknown) => {
    assert.ok(isOpenStackUnavailable(err));
    assert.ok(err instanceof OpenStackError);
    assert.equal(err.status, 503);
    assert.deepEqual(err.resource, { type: 'port', id: 'p1' });
    return true;
  });
  server.assertConsumed();
  assert.equal(clock.now() - started, 50 + 75);
});

test('a POST that may have arrived is not retried on 503', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url);
  server.on('POST /network/v2.0/networks', unavailable);
  await assert.rejects(drive(client.neutron.networks.create({ name: 'n' }), clock), isOpenStackUnavailable);
  server.assertConsumed();
});

test('a POST refused with 429 is retried after Retry-After', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url);
  server
    .on('POST /network/v2.0/ports', { status: 429, body: 'slow down', headers: { 'retry-after': '2' } })
    .on('POST /network/v2.0/ports', { status: 201, body: { port: { id: 'port1' } } });
  const started = clock.now();
  const port = await drive(client.neutron.ports.create({ network_id: 'n1' }), clock);
  assert.equal(port.id, 'port1');
  assert.equal(clock.now() - started, 2_000);
});

test('a 429 on the last attempt is reported as too many requests', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url, { retry: { maxAttempts: 1 } });
  server.on('GET /network/v2.0/ports', { status: 429, body: 'slow down' });
  await assert.rejects(drive(client.neutron.ports.list(), clock), isTooManyRequests);
});

test('a POST to a refused connection is retried, since it never left', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const { client, clock, logger } = testClient({
    auth: { type: 'noauth', projectId: 'p' },
    endpoints: { network: `http://127.0.0.1:${port}` },
  });
  await assert.rejects(drive(client.neutron.networks.create({ name: 'n' }), clock), (err: unknown) => {
    assert.ok(err instanceof OpenStackError);
    assert.equal(err.status, undefined);
    assert.match(err.message, /^POST \/v2.0\/networks \(network "n"\): no answer: .*ECONNREFUSED/);
    return true;
  });
  assert.equal(logger.records.filter((r) => r.msg === 'openstack call failed; retrying').length, 3);
});

test('a call that gets no answer within timeoutMs fails as unavailable', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url, { timeoutMs: 50, retry: { maxAttempts: 1 } });
  server.on('GET /network/v2.0/networks', HANG);
  await assert.rejects(drive(client.neutron.networks.list(), clock), (err: unknown) => {
    assert.ok(isOpenStackUnavailable(err));
    assert.match((err as Error).message, /no answer: .*timeout/i);
    return true;
  });
});

test("an aborted call rejects with the signal's reason and is not retried", async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url);
  server.on('GET /network/v2.0/networks', HANG);
  const controller = new AbortController();
  const call = drive(client.neutron.networks.list({}, { signal: controller.signal }), clock);
  const reason = new Error('shutting down');
  setImmediate(() => controller.abort(reason));
  await assert.rejects(call, (err: unknown) => err === reason);
});

test('a closed client fails at once and does not retry', async () => {
  const server = await startOpenStackServer();
  const { client, clock, logger } = noauthClient(server.url);
  await client.close();
  await assert.rejects(drive(client.neutron.networks.list(), clock), (err: unknown) => {
    assert.ok(!(err instanceof OpenStackError));
    assert.equal((err as { code?: string }).code, 'ERR_CLOSED');
    return true;
  });
  assert.equal(server.requests.length, 0);
  assert.equal(logger.records.filter((r) => r.msg === 'openstack call failed; retrying').length, 0);
});

test('every attempt is reported to the call observer with its resource and outcome', async () => {
  const server = await startOpenStackServer();
  const clock = new FakeClock(Date.parse('2025-01-01T00:00:00Z'));
  const calls: CallRecord[] = [];
  const client = createOpenStackClient(
    {
      auth: { type: 'noauth', projectId: 'p-noauth' },
      endpoints: { network: `${server.url}/network`, loadBalancer: `${server.url}/lb` },
    },
    { clock, random: () => 0, onCall: (call) => calls.push(call) },
  );
  const id = '5f0c2a4e-1b7d-4c3e-9a55-0123456789ab';
  server
    .on(`GET /network/v2.0/ports/${id}`, unavailable)
    .on(`GET /network/v2.0/ports/${id}`, { status: 200, body: { port: { id } } })
    .on(`GET /lb/v2/lbaas/pools/${id}/members`, { status: 200, body: { members: [] } });
  await drive(client.neutron.ports.get(id), clock);
  await drive(client.octavia.members(id).list(), clock);
  server.assertConsumed();
  // Each with its duration by the client's clock (here the fake one).
  assert.ok(calls.every((c) => Number.isFinite(c.seconds) && c.seconds >= 0));
  assert.deepEqual(
    calls.map(({ seconds: _, ...c }) => c),
    [
      { service: 'network', method: 'GET', resource: 'ports', outcome: '503' },
      { service: 'network', method: 'GET', resource: 'ports', outcome: 'ok' },
      { service: 'load-balancer', method: 'GET', resource: 'pools/members', outcome: 'ok' },
    ],
  );
});
