/**
 * The OpenStack client against the real local Neutron and Octavia lab (noauth): create, tag,
 * filter, page, conflict and delete on Neutron; a load balancer on a Neutron VIP port through
 * PENDING_* to ACTIVE, with listener, pool and batch members, then a cascade delete. Each test
 * works in a project of its own and deletes what it created.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import {
  isConflict,
  isNotFound,
  isOpenStackImmutable,
  openStackFaultType,
} from '../../src/errors/classify.js';
import { createOpenStackClient, type OpenStackClient } from '../../src/openstack/openstack-client.js';
import { OpenStackError } from '../../src/errors/openstack-error.js';
import { portAddresses } from '../../src/openstack/neutron-client.js';
import { freshProject, sharedLab } from '../harness/openstack/test-lab.js';

/**
 * How long to wait for Octavia's worker before giving up: a safety net far above the ~1 s a change
 * takes, even with other tests writing to the lab on a loaded machine.
 */
const GIVE_UP_MS = 180_000;

interface LabClient {
  client: OpenStackClient;
  project: string;
  /** Register an undo step; they run last-in first-out when the test ends, then the client closes. */
  undo: (step: () => Promise<unknown>) => void;
}

async function labClient(t: TestContext): Promise<LabClient> {
  const lab = await sharedLab();
  const project = freshProject();
  const client = createOpenStackClient({
    auth: { type: 'noauth', projectId: project },
    endpoints: { network: lab.neutronUrl, loadBalancer: lab.octaviaUrl },
  });
  const steps: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const step of steps.reverse()) await step().catch(() => undefined);
    await client.close();
  });
  return { client, project, undo: (step) => steps.push(step) };
}

test('networks, subnets and tagged ports are created in the project, filtered by tags and paged', async (t) => {
  const { client, project, undo } = await labClient(t);
  const { neutron } = client;
  const net = await neutron.networks.create({ name: 'raven-e2e', tags: ['raven', `p=${project}`] });
  undo(() => neutron.networks.delete(net.id));
  assert.equal(net.project_id, project);
  assert.deepEqual([...(net.tags ?? [])].sort(), ['raven', `p=${project}`].sort());
  const subnet = await neutron.subnets.create({
    network_id: net.id,
    ip_version: 4,
    cidr: '10.77.0.0/24',
    tags: ['raven'],
  });
  undo(() => neutron.subnets.delete(subnet.id));

  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await neutron.ports.create({
      network_id: net.id,
      name: `web-${i}`,
      fixed_ips: [{ subnet_id: subnet.id, ip_address: `10.77.0.${10 + i}` }],
      device_owner: 'raven:e2e',
      device_id: `svc-${i}`,
      tags: ['raven', `p=${project}`],
    });
    undo(() => neutron.ports.delete(port.id));
    ids.push(port.id);
    assert.deepEqual(portAddresses(port).ips, [`10.77.0.${10 + i}`]);
    assert.match(port.mac_address, /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
    assert.deepEqual([...(port.tags ?? [])].sort(), ['raven', `p=${project}`].sort());
  }

  const pages: number[] = [];
  for await (const page of neutron.ports.pages({ tags: ['raven', `p=${project}`] }, { pageSize: 2 }))
    pages.push(page.length);
  assert.deepEqual(pages, [2, 1]);
  const tagged = await neutron.ports.list({ 'tags-any': [`p=${project}`, 'nobody'], project_id: project });
  assert.deepEqual(tagged.map((p) => p.id).sort(), [...ids].sort());
  assert.deepEqual(await neutron.ports.list({ tags: [`p=${project}`, 'nobody'] }), []);

  await assert.rejects(
    neutron.ports.create({
      network_id: net.id,
      fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.77.0.10' }],
    }),
    (err: unknown) => {
      assert.ok(err instanceof OpenStackError);
      assert.equal(err.call, 'POST /v2.0/ports');
      assert.equal(err.status, 409);
      assert.equal(openStackFaultType(err), 'IpAddressAlreadyAllocated');
      assert.ok(isConflict(err));
      return true;
    },
  );
  await assert.rejects(
    neutron.networks.delete(net.id),
    (err: unknown) => openStackFaultType(err) === 'NetworkInUse',
  );

  const first = ids[0] ?? assert.fail('no port');
  assert.equal(await neutron.ports.delete(first), 'deleted');
  assert.equal(await neutron.ports.delete(first), 'already-gone');
  await assert.rejects(neutron.ports.get(first), isNotFound);
});

test('a router joins a subnet to an external network and a floating IP follows a port', async (t) => {
  const { client, undo } = await labClient(t);
  const { neutron } = client;
  const external = await neutron.networks.create({ name: 'raven-ext', 'router:external': true });
  undo(() => neutron.networks.delete(external.id));
  const extSubnet = await neutron.subnets.create({
    network_id: external.id,
    ip_version: 4,
    cidr: '198.51.100.0/24',
  });
  undo(() => neutron.subnets.delete(extSubnet.id));
  const net = await neutron.networks.create({ name: 'raven-int' });
  undo(() => neutron.networks.delete(net.id));
  const subnet = await neutron.subnets.create({ network_id: net.id, ip_version: 4, cidr: '10.78.0.0/24' });
  undo(() => neutron.subnets.delete(subnet.id));

  const router = await neutron.routers.create({ name: 'raven-router', tags: ['raven'] });
  undo(() => neutron.routers.delete(router.id));
  assert.deepEqual(router.tags, ['raven']);
  const withGateway = await neutron.routers.setGateway(router.id, { network_id: external.id });
  undo(() => neutron.routers.clearGateway(router.id));
  assert.equal(withGateway.external_gateway_info?.network_id, external.id);
  const iface = await neutron.routers.addInterface(router.id, { subnet_id: subnet.id });
  undo(() => neutron.routers.removeInterface(router.id, { subnet_id: subnet.id }));
  assert.equal(iface.subnet_id, subnet.id);

  const port = await neutron.ports.create({ network_id: net.id, fixed_ips: [{ subnet_id: subnet.id }] });
  undo(() => neutron.ports.delete(port.id));
  const fip = await neutron.floatingIps.create({ floating_network_id: external.id, tags: ['raven'] });
  undo(() => neutron.floatingIps.delete(fip.id));
  assert.match(fip.floating_ip_address, /^198\.51\.100\./);
  const associated = await neutron.floatingIps.associate(fip.id, port.id);
  assert.equal(associated.port_id, port.id);
  assert.equal(associated.fixed_ip_address, portAddresses(port).ips[0]);
  const detached = await neutron.floatingIps.disassociate(fip.id);
  assert.equal(detached.port_id, null);

  assert.equal(await neutron.routers.removeInterface(router.id, { subnet_id: subnet.id }), 'deleted');
  assert.equal(await neutron.routers.removeInterface(router.id, { subnet_id: subnet.id }), 'already-gone');
});

test('security group rules conflict when repeated', async (t) => {
  const { client, undo } = await labClient(t);
  const { neutron } = client;
  const group = await neutron.securityGroups.create({ name: 'raven-sg', tags: ['raven'] });
  undo(() => neutron.securityGroups.delete(group.id));
  const rule = {
    security_group_id: group.id,
    direction: 'ingress',
    ethertype: 'IPv4',
    protocol: 'tcp',
    port_range_min: 80,
    port_range_max: 80,
    remote_ip_prefix: '0.0.0.0/0',
  } as const;
  const created = await neutron.securityGroupRules.create(rule);
  assert.equal(created.security_group_id, group.id);
  await assert.rejects(
    neutron.securityGroupRules.create(rule),
    (err: unknown) => isConflict(err) && openStackFaultType(err) === 'SecurityGroupRuleExists',
  );
  assert.equal(await neutron.securityGroupRules.delete(created.id), 'deleted');
  assert.equal(await neutron.securityGroupRules.delete(created.id), 'already-gone');
});

test('a load balancer on a Neutron VIP port goes ACTIVE, takes a listener, pool and members, and cascades away', async (t) => {
  const { client, project, undo } = await labClient(t);
  const { neutron, octavia } = client;
  const net = await neutron.networks.create({ name: 'raven-lb' });
  undo(() => neutron.networks.delete(net.id));
  const subnet = await neutron.subnets.create({ network_id: net.id, ip_version: 4, cidr: '10.79.0.0/24' });
  undo(() => neutron.subnets.delete(subnet.id));
  const vip = await neutron.ports.create({
    network_id: net.id,
    name: 'raven-vip',
    fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.79.0.100' }],
  });
  undo(() => neutron.ports.delete(vip.id));

  const lb = await octavia.loadBalancers.create({
    name: 'raven-web',
    vip_port_id: vip.id,
    vip_subnet_id: subnet.id,
    vip_address: '10.79.0.100',
    tags: ['raven', `p=${project}`],
  });
  undo(() => octavia.loadBalancers.delete(lb.id, { cascade: true }));
  assert.equal(lb.project_id, project);
  assert.equal(lb.vip_port_id, vip.id);
  assert.match(lb.provisioning_status ?? '', /^PENDING_CREATE$|^ACTIVE$/);

  // A change right after create meets the load balancer still PENDING_CREATE.
  const early = octavia.listeners.create({ loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 81 });
  await assert.rejects(early, isOpenStackImmutable);

  const active = await octavia.waitForActive(lb.id, { timeoutMs: GIVE_UP_MS });
  assert.equal(active.provisioning_status, 'ACTIVE');
  const listener = await octavia.whenActive(
    lb.id,
    () =>
      octavia.listeners.create({
        loadbalancer_id: lb.id,
        protocol: 'TCP',
        protocol_port: 80,
        tags: ['raven'],
      }),
    { timeoutMs: GIVE_UP_MS },
  );
  assert.deepEqual(listener.tags, ['raven']);
  const pool = await octavia.whenActive(
    lb.id,
    () =>
      octavia.pools.create({
        listener_id: listener.id,
        protocol: 'TCP',
        lb_algorithm: 'ROUND_ROBIN',
        tags: ['raven'],
      }),
    { timeoutMs: GIVE_UP_MS },
  );
  const members = octavia.members(pool.id);
  await octavia.whenActive(
    lb.id,
    () =>
      members.replaceAll([
        { address: '10.79.0.11', protocol_port: 8080, subnet_id: subnet.id, tags: ['raven'] },
        { address: '10.79.0.12', protocol_port: 8080, subnet_id: subnet.id, tags: ['raven'] },
      ]),
    { timeoutMs: GIVE_UP_MS },
  );
  await octavia.waitForActive(lb.id, { timeoutMs: GIVE_UP_MS });
  assert.deepEqual((await members.list()).map((m) => m.address).sort(), ['10.79.0.11', '10.79.0.12']);

  const mine = await octavia.loadBalancers.list({ tags: [`p=${project}`] });
  assert.deepEqual(
    mine.map((l) => l.id),
    [lb.id],
  );

  assert.equal(await octavia.loadBalancers.delete(lb.id, { cascade: true }), 'deleted');
  await waitUntilGone(() => octavia.loadBalancers.get(lb.id));
  assert.equal(await octavia.loadBalancers.delete(lb.id), 'already-gone');
});

/** Poll until `get` answers 404 (a deleted load balancer lingers in PENDING_DELETE / DELETED). */
async function waitUntilGone(get: () => Promise<{ provisioning_status?: string }>): Promise<void> {
  for (const giveUp = Date.now() + GIVE_UP_MS; Date.now() < giveUp;) {
    try {
      const found = await get();
      if (found.provisioning_status === 'DELETED') return;
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  assert.fail(`the load balancer was not deleted within ${GIVE_UP_MS / 1000} s`);
}
