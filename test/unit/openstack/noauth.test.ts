import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../src/errors/raven-error.js';
import { startOpenStackServer } from './openstack-server.js';
import { noauthClient, testClient } from './helpers.js';

test('noauth puts project_id into every create body and sends X-Project-Id without a token', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  server
    .on('POST /network/v2.0/security-group-rules', {
      status: 201,
      body: {
        security_group_rule: {
          id: 'sgr1',
          security_group_id: 'sg1',
          direction: 'ingress',
          ethertype: 'IPv4',
        },
      },
    })
    .on('POST /lb/v2/lbaas/listeners', {
      status: 201,
      body: { listener: { id: 'l1', protocol: 'TCP', protocol_port: 80 } },
    });
  await client.neutron.securityGroupRules.create({
    security_group_id: 'sg1',
    direction: 'ingress',
    protocol: 'tcp',
  });
  await client.octavia.listeners.create({ loadbalancer_id: 'lb1', protocol: 'TCP', protocol_port: 80 });
  server.assertConsumed();
  const [rule, listener] = server.requests;
  assert.deepEqual(rule?.json, {
    security_group_rule: {
      security_group_id: 'sg1',
      direction: 'ingress',
      protocol: 'tcp',
      project_id: 'p-noauth',
    },
  });
  assert.deepEqual(listener?.json, {
    listener: { loadbalancer_id: 'lb1', protocol: 'TCP', protocol_port: 80, project_id: 'p-noauth' },
  });
  assert.equal(rule.headers['x-project-id'], 'p-noauth');
  assert.equal(rule.headers['x-auth-token'], undefined);
  assert.equal(await client.projectId(), 'p-noauth');
});

test('an explicit project_id in a create body is kept', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  server.on('POST /network/v2.0/ports', { status: 201, body: { port: { id: 'port1' } } });
  await client.neutron.ports.create({ network_id: 'n1', project_id: 'other' });
  assert.deepEqual(server.requests[0]?.json, { port: { network_id: 'n1', project_id: 'other' } });
});

test('updates and deletes carry no project_id', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  server
    .on('PUT /network/v2.0/networks/n1', { status: 200, body: { network: { id: 'n1', name: 'renamed' } } })
    .on('DELETE /network/v2.0/networks/n1', { status: 204 });
  await client.neutron.networks.update('n1', { name: 'renamed' });
  assert.equal(await client.neutron.networks.delete('n1'), 'deleted');
  assert.deepEqual(server.requests[0]?.json, { network: { name: 'renamed' } });
  assert.equal(server.requests[1]?.body, '');
});

test('a noauth client without an Octavia endpoint says which setting is missing on use', async () => {
  const server = await startOpenStackServer();
  const { client } = testClient({
    auth: { type: 'noauth', projectId: 'p1' },
    endpoints: { network: `${server.url}/network` },
  });
  await assert.rejects(client.octavia.loadBalancers.list(), (err: unknown) => {
    assert.ok(err instanceof ConfigError);
    assert.equal(err.path, 'endpoints.loadBalancer');
    return true;
  });
});
