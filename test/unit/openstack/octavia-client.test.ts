import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  isNotFound,
  isOpenStackImmutable,
  isOpenStackProvisioningFailed,
  isRetryable,
} from '../../../src/errors/classify.js';
import { OpenStackProvisioningError } from '../../../src/errors/openstack-error.js';
import { provisioningPhase } from '../../../src/openstack/load-balancer-waiter.js';
import { drive, octaviaFault, startOpenStackServer } from './openstack-server.js';
import { noauthClient } from './helpers.js';

function lb(status: string, extra: Record<string, unknown> = {}): { status: number; body: unknown } {
  return {
    status: 200,
    body: {
      loadbalancer: {
        id: 'lb-1',
        name: 'raven-web',
        provisioning_status: status,
        operating_status: status === 'ACTIVE' ? 'ONLINE' : 'OFFLINE',
        vip_address: '10.0.0.5',
        vip_port_id: 'port-vip',
        vip_subnet_id: 'sub-1',
        provider: 'amphora',
        listeners: [],
        pools: [],
        tags: ['raven'],
        ...extra,
      },
    },
  };
}

const immutable = {
  status: 409,
  body: octaviaFault('Load Balancer lb-1 is immutable and cannot be updated.'),
};

test('a load balancer is created on a Neutron VIP port with its tags in the body', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  server.on('POST /lb/v2/lbaas/loadbalancers', { ...lb('PENDING_CREATE'), status: 201 });
  const created = await client.octavia.loadBalancers.create({
    name: 'raven-web',
    vip_port_id: 'port-vip',
    vip_subnet_id: 'sub-1',
    vip_address: '10.0.0.5',
    tags: ['raven'],
  });
  server.assertConsumed();
  assert.equal(created.provisioning_status, 'PENDING_CREATE');
  assert.deepEqual(server.requests[0]?.json, {
    loadbalancer: {
      name: 'raven-web',
      vip_port_id: 'port-vip',
      vip_subnet_id: 'sub-1',
      vip_address: '10.0.0.5',
      tags: ['raven'],
      project_id: 'p-noauth',
    },
  });
});

test('load balancers are listed by tags following loadbalancers_links', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  server
    .on('GET /lb/v2/lbaas/loadbalancers?tags=raven', {
      status: 200,
      body: {
        loadbalancers: [{ id: 'lb-1' }],
        loadbalancers_links: [
          { href: 'http://octavia.invalid/v2/lbaas/loadbalancers?tags=raven&marker=lb-1', rel: 'next' },
        ],
      },
    })
    .on('GET /lb/v2/lbaas/loadbalancers?tags=raven&marker=lb-1', {
      status: 200,
      body: { loadbalancers: [{ id: 'lb-2' }] },
    });
  const found = await client.octavia.loadBalancers.list({ tags: ['raven'] });
  assert.deepEqual(
    found.map((l) => l.id),
    ['lb-1', 'lb-2'],
  );
  server.assertConsumed();
});

test('delete can cascade, and a load balancer already gone is done', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  server
    .on('DELETE /lb/v2/lbaas/loadbalancers/lb-1?cascade=true', { status: 204 })
    .on('DELETE /lb/v2/lbaas/loadbalancers/lb-1', {
      status: 404,
      body: octaviaFault('Load Balancer lb-1 not found.'),
    });
  assert.equal(await client.octavia.loadBalancers.delete('lb-1', { cascade: true }), 'deleted');
  assert.equal(await client.octavia.loadBalancers.delete('lb-1'), 'already-gone');
  server.assertConsumed();
  assert.equal(server.requests[1]?.url, '/lb/v2/lbaas/loadbalancers/lb-1');
});

test("waitForActive polls through PENDING_UPDATE with the backoff's growing delays until ACTIVE", async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url);
  server
    .on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('PENDING_CREATE'))
    .on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('PENDING_UPDATE'))
    .on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('PENDING_UPDATE'))
    .on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('ACTIVE'));
  const started = clock.now();
  const active = await drive(client.octavia.waitForActive('lb-1', { timeoutMs: 60_000 }), clock);
  assert.equal(active.provisioning_status, 'ACTIVE');
  server.assertConsumed();
  // random() = 0: each delay is 10 % under 1 s, 1.5 s, 2.25 s.
  assert.equal(clock.now() - started, 900 + 1350 + 2025);
});

test('waitForActive fails at once on ERROR, naming the status', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url);
  server
    .on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('PENDING_UPDATE'))
    .on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('ERROR', { operating_status: 'ERROR' }));
  await assert.rejects(drive(client.octavia.waitForActive('lb-1'), clock), (err: unknown) => {
    assert.ok(err instanceof OpenStackProvisioningError);
    assert.ok(isOpenStackProvisioningFailed(err));
    assert.equal(err.provisioningStatus, 'ERROR');
    assert.equal(err.timedOut, false);
    assert.equal(
      err.message,
      'loadbalancer lb-1 went to provisioning_status ERROR, operating_status ERROR instead of ACTIVE',
    );
    assert.ok(!isRetryable(err));
    return true;
  });
  server.assertConsumed();
});

test('waitForActive gives up at the deadline with the last status', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url);
  for (let i = 0; i < 4; i++) server.on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('PENDING_UPDATE'));
  await assert.rejects(
    drive(client.octavia.waitForActive('lb-1', { timeoutMs: 3_000 }), clock),
    (err: unknown) => {
      assert.ok(err instanceof OpenStackProvisioningError);
      assert.equal(err.timedOut, true);
      assert.equal(err.provisioningStatus, 'PENDING_UPDATE');
      assert.match(err.message, /is still PENDING_UPDATE, operating_status OFFLINE after 3000 ms/);
      assert.ok(isRetryable(err));
      return true;
    },
  );
  server.assertConsumed();
});

test('waitForActive on a load balancer that vanished throws not found', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url);
  server.on('GET /lb/v2/lbaas/loadbalancers/lb-1', {
    status: 404,
    body: octaviaFault('Load Balancer lb-1 not found.'),
  });
  await assert.rejects(drive(client.octavia.waitForActive('lb-1'), clock), isNotFound);
});

test('whenActive retries a change once after a 409 immutable', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url);
  const listener = { id: 'l-1', protocol: 'TCP', protocol_port: 80, provisioning_status: 'PENDING_CREATE' };
  server
    .on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('ACTIVE'))
    .on('POST /lb/v2/lbaas/listeners', immutable)
    .on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('PENDING_UPDATE'))
    .on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('ACTIVE'))
    .on('POST /lb/v2/lbaas/listeners', { status: 201, body: { listener } });
  const created = await drive(
    client.octavia.whenActive('lb-1', () =>
      client.octavia.listeners.create({
        loadbalancer_id: 'lb-1',
        protocol: 'TCP',
        protocol_port: 80,
        tags: ['raven'],
      }),
    ),
    clock,
  );
  assert.equal(created.id, 'l-1');
  server.assertConsumed();
});

test('a second immutable refusal is thrown', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url);
  server
    .on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('ACTIVE'))
    .on('PUT /lb/v2/lbaas/pools/pool-1/members', immutable)
    .on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('ACTIVE'))
    .on('PUT /lb/v2/lbaas/pools/pool-1/members', immutable);
  const change = (): Promise<void> =>
    client.octavia
      .members('pool-1')
      .replaceAll([{ address: '10.0.0.7', protocol_port: 8080, subnet_id: 'sub-1' }]);
  await assert.rejects(drive(client.octavia.whenActive('lb-1', change), clock), isOpenStackImmutable);
  server.assertConsumed();
});

test('members are batch-replaced with one PUT and listed per pool', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  server
    .on('PUT /lb/v2/lbaas/pools/pool-1/members', { status: 202 })
    .on('GET /lb/v2/lbaas/pools/pool-1/members', {
      status: 200,
      body: { members: [{ id: 'm-1', address: '10.0.0.7', protocol_port: 8080 }], members_links: [] },
    });
  await client.octavia.members('pool-1').replaceAll([
    { address: '10.0.0.7', protocol_port: 8080, subnet_id: 'sub-1', tags: ['raven'] },
    { address: '10.0.0.8', protocol_port: 8080, subnet_id: 'sub-1', tags: ['raven'] },
  ]);
  const members = await client.octavia.members('pool-1').list();
  assert.equal(members[0]?.address, '10.0.0.7');
  server.assertConsumed();
  assert.deepEqual(server.requests[0]?.json, {
    members: [
      { address: '10.0.0.7', protocol_port: 8080, subnet_id: 'sub-1', tags: ['raven'] },
      { address: '10.0.0.8', protocol_port: 8080, subnet_id: 'sub-1', tags: ['raven'] },
    ],
  });
});

test('pools and health monitors are created with their tags in the body', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  server
    .on('POST /lb/v2/lbaas/pools', {
      status: 201,
      body: { pool: { id: 'pool-1', protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' } },
    })
    .on('POST /lb/v2/lbaas/healthmonitors', {
      status: 201,
      body: { healthmonitor: { id: 'hm-1', type: 'TCP', delay: 5, timeout: 3, max_retries: 3 } },
    });
  await client.octavia.pools.create({
    listener_id: 'l-1',
    protocol: 'TCP',
    lb_algorithm: 'ROUND_ROBIN',
    tags: ['raven'],
  });
  await client.octavia.healthMonitors.create({
    pool_id: 'pool-1',
    type: 'TCP',
    delay: 5,
    timeout: 3,
    max_retries: 3,
  });
  server.assertConsumed();
  assert.deepEqual(server.requests[0]?.json, {
    pool: {
      listener_id: 'l-1',
      protocol: 'TCP',
      lb_algorithm: 'ROUND_ROBIN',
      tags: ['raven'],
      project_id: 'p-noauth',
    },
  });
});

test('provisioning statuses are ready, pending or failed', () => {
  assert.equal(provisioningPhase('ACTIVE'), 'ready');
  assert.equal(provisioningPhase(undefined), 'ready');
  assert.equal(provisioningPhase('PENDING_UPDATE'), 'pending');
  assert.equal(provisioningPhase('ERROR'), 'failed');
  assert.equal(provisioningPhase('DELETED'), 'failed');
});

test('a run of changes on a load balancer known ACTIVE polls only after its own changes', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url);
  server
    .on('PUT /lb/v2/lbaas/pools/pool-1/members', { status: 202, body: '' })
    .on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('ACTIVE'))
    .on('PUT /lb/v2/lbaas/pools/pool-2/members', { status: 202, body: '' })
    .on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('ACTIVE'));
  const changes = client.octavia.changes('lb-1', 'active');
  const members = [{ address: '10.0.0.7', protocol_port: 8080, subnet_id: 'sub-1' }];
  const started = clock.now();
  await drive(
    (async () => {
      await changes.change(() => client.octavia.members('pool-1').replaceAll(members));
      await changes.change(() => client.octavia.members('pool-2').replaceAll(members));
      await changes.settle();
      await changes.settle();
    })(),
    clock,
  );
  server.assertConsumed();
  // Each wait looks first one delay after the change (random() = 0: 900 ms), never at once.
  assert.equal(clock.now() - started, 900 + 900);
});

test('a run that changes nothing makes no status call', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url);
  await drive(client.octavia.changes('lb-1', 'active').settle(), clock);
  server.assertConsumed();
  assert.equal(server.requests.length, 0);
});

test('a change refused as immutable while the load balancer looks ACTIVE is retried after waits', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url);
  server
    .on('PUT /lb/v2/lbaas/pools/pool-1/members', immutable)
    .on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('ACTIVE'))
    .on('PUT /lb/v2/lbaas/pools/pool-1/members', immutable)
    .on('GET /lb/v2/lbaas/loadbalancers/lb-1', lb('ACTIVE'))
    .on('PUT /lb/v2/lbaas/pools/pool-1/members', { status: 202, body: '' });
  const changes = client.octavia.changes('lb-1', 'active');
  await drive(
    changes.change(() =>
      client.octavia.members('pool-1').replaceAll([{ address: '10.0.0.7', protocol_port: 8080 }]),
    ),
    clock,
  );
  server.assertConsumed();
});
