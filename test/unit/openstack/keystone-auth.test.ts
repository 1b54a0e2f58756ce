import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../src/errors/raven-error.js';
import { isUnauthorized } from '../../../src/errors/classify.js';
import { OpenStackError } from '../../../src/errors/openstack-error.js';
import { drive, keystoneToken, startOpenStackServer, type OpenStackServer } from './openstack-server.js';
import { testClient } from './helpers.js';

const NOW = Date.parse('2025-01-01T00:00:00Z');
const HOUR = 3_600_000;

function catalog(url: string): Parameters<typeof keystoneToken>[0]['catalog'] {
  return [
    { type: 'identity', endpoints: [{ url: `${url}/v3`, interface: 'public', region: 'RegionOne' }] },
    {
      type: 'network',
      endpoints: [
        { url: `${url}/net-internal-one`, interface: 'internal', region: 'RegionOne' },
        { url: `${url}/net-public-one/`, interface: 'public', region: 'RegionOne' },
        { url: `${url}/net-public-two/v2.0`, interface: 'public', region: 'RegionTwo' },
      ],
    },
    {
      type: 'load-balancer',
      endpoints: [
        { url: `${url}/lb-public-one`, interface: 'public', region: 'RegionOne' },
        { url: `${url}/lb-public-two`, interface: 'public', region: 'RegionTwo' },
      ],
    },
  ];
}

function passwordConfig(
  server: OpenStackServer,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    auth: {
      type: 'password',
      authUrl: `${server.url}/v3`,
      username: 'raven',
      userDomainName: 'Default',
      password: 'pw-never-logged',
      projectName: 'raven',
      projectDomainName: 'Default',
    },
    ...extra,
  };
}

test('password auth sends a project-scoped password body and uses the catalog endpoint of the region', async () => {
  const server = await startOpenStackServer();
  const { client } = testClient(passwordConfig(server, { region: 'RegionTwo' }));
  server
    .on('POST /v3/auth/tokens', keystoneToken({ expiresAt: NOW + HOUR, catalog: catalog(server.url) }))
    .on('GET /net-public-two/v2.0/networks', { status: 200, body: { networks: [] } })
    .on('GET /lb-public-two/v2/lbaas/loadbalancers', { status: 200, body: { loadbalancers: [] } });
  assert.deepEqual(await client.neutron.networks.list(), []);
  assert.deepEqual(await client.octavia.loadBalancers.list(), []);
  server.assertConsumed();
  const [auth, neutron] = server.requests;
  assert.deepEqual(auth?.json, {
    auth: {
      identity: {
        methods: ['password'],
        password: { user: { name: 'raven', domain: { name: 'Default' }, password: 'pw-never-logged' } },
      },
      scope: { project: { name: 'raven', domain: { name: 'Default' } } },
    },
  });
  assert.equal(neutron?.headers['x-auth-token'], 'gAAAAAtoken');
  assert.equal(neutron.headers['x-project-id'], undefined);
  assert.equal(await client.projectId(), 'p-42');
});

test('the interface setting picks the internal endpoint', async () => {
  const server = await startOpenStackServer();
  const { client } = testClient(passwordConfig(server, { interface: 'internal' }));
  server
    .on('POST /v3/auth/tokens', keystoneToken({ expiresAt: NOW + HOUR, catalog: catalog(server.url) }))
    .on('GET /net-internal-one/v2.0/ports', { status: 200, body: { ports: [] } });
  await client.neutron.ports.list();
  server.assertConsumed();
});

test('application credentials are sent by id and secret without a scope', async () => {
  const server = await startOpenStackServer();
  const { client } = testClient({
    auth: {
      type: 'applicationCredential',
      authUrl: server.url,
      applicationCredentialId: 'ac-1',
      applicationCredentialSecret: 'ac-secret',
    },
  });
  server
    .on('POST /v3/auth/tokens', keystoneToken({ expiresAt: NOW + HOUR, catalog: catalog(server.url) }))
    .on('GET /net-public-one/v2.0/subnets', { status: 200, body: { subnets: [] } });
  await client.neutron.subnets.list();
  server.assertConsumed();
  assert.deepEqual(server.requests[0]?.json, {
    auth: {
      identity: {
        methods: ['application_credential'],
        application_credential: { id: 'ac-1', secret: 'ac-secret' },
      },
    },
  });
});

test('a service missing from the wanted region is a config error listing what the catalog offers', async () => {
  const server = await startOpenStackServer();
  const { client } = testClient(passwordConfig(server, { region: 'RegionThree' }));
  server.on('POST /v3/auth/tokens', keystoneToken({ expiresAt: NOW + HOUR, catalog: catalog(server.url) }));
  await assert.rejects(client.neutron.networks.list(), (err: unknown) => {
    assert.ok(err instanceof ConfigError);
    assert.equal(err.path, 'region');
    assert.match(err.message, /no 'network' endpoint with interface 'public' in region 'RegionThree'/);
    assert.match(err.message, /public\/RegionTwo/);
    return true;
  });
});

test('the token is reused until shortly before it expires, then renewed', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = testClient(passwordConfig(server, { tokenRefreshMarginMs: 60_000 }));
  server
    .on(
      'POST /v3/auth/tokens',
      keystoneToken({ expiresAt: NOW + HOUR, catalog: catalog(server.url), token: 't1' }),
    )
    .on('GET /net-public-one/v2.0/networks', { status: 200, body: { networks: [] } })
    .on('GET /net-public-one/v2.0/networks', { status: 200, body: { networks: [] } });
  await client.neutron.networks.list();
  await clock.tick(HOUR - 61_000);
  await client.neutron.networks.list();
  server.assertConsumed();
  server
    .on(
      'POST /v3/auth/tokens',
      keystoneToken({ expiresAt: NOW + 2 * HOUR, catalog: catalog(server.url), token: 't2' }),
    )
    .on('GET /net-public-one/v2.0/networks', { status: 200, body: { networks: [] } });
  await clock.tick(2_000);
  await client.neutron.networks.list();
  server.assertConsumed();
  assert.deepEqual(
    server.requests.filter((r) => r.url.includes('networks')).map((r) => r.headers['x-auth-token']),
    ['t1', 't1', 't2'],
  );
});

test('concurrent calls share one authentication', async () => {
  const server = await startOpenStackServer();
  const { client } = testClient(passwordConfig(server));
  server
    .on('POST /v3/auth/tokens', keystoneToken({ expiresAt: NOW + HOUR, catalog: catalog(server.url) }))
    .on('GET /net-public-one/v2.0/networks', { status: 200, body: { networks: [] } })
    .on('GET /net-public-one/v2.0/networks', { status: 200, body: { networks: [] } });
  await Promise.all([client.neutron.networks.list(), client.neutron.networks.list()]);
  server.assertConsumed();
});

test('a 401 from a service re-authenticates once and repeats the call with the new token', async () => {
  const server = await startOpenStackServer();
  const { client, logger } = testClient(passwordConfig(server));
  const unauthorized = {
    status: 401,
    body: {
      error: {
        code: 401,
        title: 'Unauthorized',
        message: 'The request you have made requires authentication.',
      },
    },
  };
  server
    .on(
      'POST /v3/auth/tokens',
      keystoneToken({ expiresAt: NOW + HOUR, catalog: catalog(server.url), token: 't1' }),
    )
    .on('GET /net-public-one/v2.0/routers', unauthorized)
    .on(
      'POST /v3/auth/tokens',
      keystoneToken({ expiresAt: NOW + HOUR, catalog: catalog(server.url), token: 't2' }),
    )
    .on('GET /net-public-one/v2.0/routers', { status: 200, body: { routers: [{ id: 'r1' }] } });
  assert.deepEqual(await client.neutron.routers.list(), [{ id: 'r1' }]);
  server.assertConsumed();
  assert.equal(server.requests[3]?.headers['x-auth-token'], 't2');

  server
    .on('GET /net-public-one/v2.0/routers', unauthorized)
    .on(
      'POST /v3/auth/tokens',
      keystoneToken({ expiresAt: NOW + HOUR, catalog: catalog(server.url), token: 't3' }),
    )
    .on('GET /net-public-one/v2.0/routers', unauthorized);
  await assert.rejects(client.neutron.routers.list(), (err: unknown) => {
    assert.ok(isUnauthorized(err));
    assert.ok(err instanceof OpenStackError);
    assert.equal(err.call, 'GET /v2.0/routers');
    return true;
  });
  server.assertConsumed();
  const logged = JSON.stringify(logger.records);
  assert.ok(!logged.includes('pw-never-logged'), 'the password is never logged');
  assert.ok(!logged.includes('t2'), 'tokens are never logged');
});

test('rejected credentials are an identity error with the Keystone message', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = testClient(passwordConfig(server));
  server.on('POST /v3/auth/tokens', {
    status: 401,
    body: {
      error: {
        code: 401,
        title: 'Unauthorized',
        message: 'The request you have made requires authentication.',
      },
    },
    headers: { 'x-openstack-request-id': 'req-abc' },
  });
  await assert.rejects(drive(client.neutron.networks.list(), clock), (err: unknown) => {
    assert.ok(err instanceof OpenStackError);
    assert.equal(err.service, 'identity');
    assert.equal(err.status, 401);
    assert.equal(err.faultType, 'Unauthorized');
    assert.equal(
      err.message,
      'POST /v3/auth/tokens: 401 Unauthorized: The request you have made requires authentication. [request req-abc]',
    );
    assert.ok(!err.message.includes('pw-never-logged'));
    return true;
  });
  server.assertConsumed();
});

test('a token answer without X-Subject-Token is reported, not used', async () => {
  const server = await startOpenStackServer();
  const { client } = testClient(passwordConfig(server));
  const answer = keystoneToken({ expiresAt: NOW + HOUR, catalog: catalog(server.url) });
  server.on('POST /v3/auth/tokens', { ...answer, headers: {} });
  await assert.rejects(client.neutron.networks.list(), /no X-Subject-Token header/);
});
