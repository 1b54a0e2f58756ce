import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isConflict } from '../../../src/errors/classify.js';
import { OpenStackError } from '../../../src/errors/openstack-error.js';
import { portAddresses } from '../../../src/openstack/neutron-client.js';
import { drive, neutronError, startOpenStackServer } from './openstack-server.js';
import { noauthClient } from './helpers.js';

const network = {
  id: 'net-1',
  name: 'raven-web',
  admin_state_up: true,
  status: 'ACTIVE',
  subnets: [],
  shared: false,
  project_id: 'p-noauth',
  tags: [],
  mtu: 1500,
  'router:external': false,
  revision_number: 1,
};

test('a network is created, then tagged with a PUT of the full tag list', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  server
    .on('POST /network/v2.0/networks', { status: 201, body: { network } })
    .on('PUT /network/v2.0/networks/net-1/tags', { status: 200, body: { tags: ['raven', 'svc=web'] } });
  const created = await client.neutron.networks.create({ name: 'raven-web', tags: ['raven', 'svc=web'] });
  server.assertConsumed();
  assert.deepEqual(created.tags, ['raven', 'svc=web']);
  assert.deepEqual(server.requests[0]?.json, { network: { name: 'raven-web', project_id: 'p-noauth' } });
  assert.deepEqual(server.requests[1]?.json, { tags: ['raven', 'svc=web'] });
});

test('when tagging fails the new resource is deleted and the tagging error thrown', async () => {
  const server = await startOpenStackServer();
  const { client, clock } = noauthClient(server.url);
  server
    .on('POST /network/v2.0/security-groups', {
      status: 201,
      body: { security_group: { id: 'sg-1', name: 'raven', security_group_rules: [] } },
    })
    .on('PUT /network/v2.0/security-groups/sg-1/tags', {
      status: 400,
      body: neutronError('InvalidInput', 'Invalid input for operation: tag too long.'),
    })
    .on('DELETE /network/v2.0/security-groups/sg-1', { status: 204 });
  await assert.rejects(
    drive(client.neutron.securityGroups.create({ name: 'raven', tags: ['x'.repeat(300)] }), clock),
    (err: unknown) => {
      assert.ok(err instanceof OpenStackError);
      assert.equal(err.call, 'PUT /v2.0/security-groups/sg-1/tags');
      assert.equal(err.faultType, 'InvalidInput');
      return true;
    },
  );
  server.assertConsumed();
});

test('ports carry their tags in the create body, and the addresses can be read out', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  const port = {
    id: 'port-1',
    name: 'web-vip',
    network_id: 'net-1',
    mac_address: 'fa:16:3e:4c:2c:30',
    fixed_ips: [{ subnet_id: 'sub-1', ip_address: '10.0.0.5' }],
    device_owner: 'raven:vip',
    device_id: 'svc-uid',
    security_groups: ['sg-1'],
    tags: ['raven'],
    status: 'DOWN',
  };
  server.on('POST /network/v2.0/ports', { status: 201, body: { port } });
  const created = await client.neutron.ports.create({
    network_id: 'net-1',
    name: 'web-vip',
    fixed_ips: [{ subnet_id: 'sub-1', ip_address: '10.0.0.5' }],
    device_owner: 'raven:vip',
    device_id: 'svc-uid',
    security_groups: ['sg-1'],
    tags: ['raven'],
  });
  server.assertConsumed();
  assert.deepEqual(server.requests[0]?.json, {
    port: {
      network_id: 'net-1',
      name: 'web-vip',
      fixed_ips: [{ subnet_id: 'sub-1', ip_address: '10.0.0.5' }],
      device_owner: 'raven:vip',
      device_id: 'svc-uid',
      security_groups: ['sg-1'],
      tags: ['raven'],
      project_id: 'p-noauth',
    },
  });
  assert.deepEqual(portAddresses(created), {
    mac: 'fa:16:3e:4c:2c:30',
    ips: ['10.0.0.5'],
    fixedIps: [{ subnetId: 'sub-1', ip: '10.0.0.5' }],
  });
});

test('with tagPortsOnCreate off, ports are tagged after create like the rest', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url, { tagPortsOnCreate: false });
  server
    .on('POST /network/v2.0/ports', { status: 201, body: { port: { id: 'port-1' } } })
    .on('PUT /network/v2.0/ports/port-1/tags', { status: 200, body: { tags: ['raven'] } });
  await client.neutron.ports.create({ network_id: 'net-1', tags: ['raven'] });
  server.assertConsumed();
  assert.deepEqual(server.requests[0]?.json, { port: { network_id: 'net-1', project_id: 'p-noauth' } });
});

test('a list follows next links page by page with the tag filters', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  const link = (marker: string): { href: string; rel: string }[] => [
    {
      href: `http://neutron.invalid:9696/v2.0/ports?limit=2&tags=raven%2Csvc%3Dweb&marker=${marker}`,
      rel: 'next',
    },
    {
      href: `http://neutron.invalid:9696/v2.0/ports?limit=2&marker=${marker}&page_reverse=True`,
      rel: 'previous',
    },
  ];
  server
    .on('GET /network/v2.0/ports?tags=raven%2Csvc%3Dweb&tags-any=a%2Cb&device_owner=raven%3Avip&limit=2', {
      status: 200,
      body: { ports: [{ id: 'p1' }, { id: 'p2' }], ports_links: link('p2') },
    })
    .on('GET /network/v2.0/ports?limit=2&tags=raven%2Csvc%3Dweb&marker=p2', {
      status: 200,
      body: { ports: [{ id: 'p3' }, { id: 'p4' }], ports_links: link('p4') },
    })
    .on('GET /network/v2.0/ports?limit=2&tags=raven%2Csvc%3Dweb&marker=p4', {
      status: 200,
      body: { ports: [], ports_links: [] },
    });
  const ports = await client.neutron.ports.list(
    { tags: ['raven', 'svc=web'], 'tags-any': ['a', 'b'], device_owner: 'raven:vip' },
    { pageSize: 2 },
  );
  server.assertConsumed();
  assert.deepEqual(
    ports.map((p) => p.id),
    ['p1', 'p2', 'p3', 'p4'],
  );
});

test('repeated filter values become repeated query keys', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  server.on('GET /network/v2.0/networks?id=a&id=b', {
    status: 200,
    body: { networks: [{ id: 'a' }, { id: 'b' }] },
  });
  assert.equal((await client.neutron.networks.list({ id: ['a', 'b'] })).length, 2);
  server.assertConsumed();
});

test('deleting something already gone resolves as done', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  server
    .on('DELETE /network/v2.0/floatingips/fip-1', { status: 204 })
    .on('DELETE /network/v2.0/floatingips/fip-1', {
      status: 404,
      body: neutronError('FloatingIPNotFound', 'Floating IP fip-1 could not be found'),
    });
  assert.equal(await client.neutron.floatingIps.delete('fip-1'), 'deleted');
  assert.equal(await client.neutron.floatingIps.delete('fip-1'), 'already-gone');
  server.assertConsumed();
});

test('a network with ports left is a conflict, not done', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  server.on('DELETE /network/v2.0/networks/net-1', {
    status: 409,
    body: neutronError(
      'NetworkInUse',
      'Unable to complete operation on network net-1. There are one or more ports still in use on the network.',
    ),
  });
  await assert.rejects(client.neutron.networks.delete('net-1'), isConflict);
});

test('router interfaces and the external gateway use the router actions', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  const iface = {
    id: 'r1',
    subnet_id: 'sub-1',
    subnet_ids: ['sub-1'],
    port_id: 'rp-1',
    network_id: 'net-1',
    tags: [],
  };
  server
    .on('PUT /network/v2.0/routers/r1/add_router_interface', { status: 200, body: iface })
    .on('PUT /network/v2.0/routers/r1', {
      status: 200,
      body: { router: { id: 'r1', external_gateway_info: { network_id: 'ext', enable_snat: true } } },
    })
    .on('PUT /network/v2.0/routers/r1', {
      status: 200,
      body: { router: { id: 'r1', external_gateway_info: null } },
    })
    .on('PUT /network/v2.0/routers/r1/remove_router_interface', { status: 200, body: iface })
    .on('PUT /network/v2.0/routers/r1/remove_router_interface', {
      status: 404,
      body: neutronError('RouterInterfaceNotFoundForSubnet', 'Router r1 has no interface on subnet sub-1'),
    });
  assert.deepEqual(await client.neutron.routers.addInterface('r1', { subnet_id: 'sub-1' }), iface);
  const withGateway = await client.neutron.routers.setGateway('r1', { network_id: 'ext', enable_snat: true });
  assert.equal(withGateway.external_gateway_info?.network_id, 'ext');
  await client.neutron.routers.clearGateway('r1');
  assert.equal(await client.neutron.routers.removeInterface('r1', { subnet_id: 'sub-1' }), 'deleted');
  assert.equal(await client.neutron.routers.removeInterface('r1', { subnet_id: 'sub-1' }), 'already-gone');
  server.assertConsumed();
  assert.deepEqual(
    server.requests.map((r) => r.json),
    [
      { subnet_id: 'sub-1' },
      { router: { external_gateway_info: { network_id: 'ext', enable_snat: true } } },
      { router: { external_gateway_info: {} } },
      { subnet_id: 'sub-1' },
      { subnet_id: 'sub-1' },
    ],
  );
});

test('a floating IP is created on the external network, associated and disassociated', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  const fip = { id: 'fip-1', floating_network_id: 'ext', floating_ip_address: '203.0.113.10', port_id: null };
  server
    .on('POST /network/v2.0/floatingips', { status: 201, body: { floatingip: fip } })
    .on('PUT /network/v2.0/floatingips/fip-1/tags', { status: 200, body: { tags: ['raven'] } })
    .on('PUT /network/v2.0/floatingips/fip-1', {
      status: 200,
      body: { floatingip: { ...fip, port_id: 'port-1' } },
    })
    .on('PUT /network/v2.0/floatingips/fip-1', { status: 200, body: { floatingip: fip } });
  const created = await client.neutron.floatingIps.create({ floating_network_id: 'ext', tags: ['raven'] });
  assert.equal(created.floating_ip_address, '203.0.113.10');
  const associated = await client.neutron.floatingIps.associate('fip-1', 'port-1', {
    fixedIpAddress: '10.0.0.5',
  });
  assert.equal(associated.port_id, 'port-1');
  await client.neutron.floatingIps.disassociate('fip-1');
  server.assertConsumed();
  assert.deepEqual(server.requests[2]?.json, {
    floatingip: { port_id: 'port-1', fixed_ip_address: '10.0.0.5' },
  });
  assert.deepEqual(server.requests[3]?.json, { floatingip: { port_id: null } });
});

test('an answer without the expected wrapper is reported with the call', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  server.on('GET /network/v2.0/subnets/s1', { status: 200, body: { something: {} } });
  await assert.rejects(
    client.neutron.subnets.get('s1'),
    /GET \/v2.0\/subnets\/s1 .*the answer has no "subnet"/,
  );
});
