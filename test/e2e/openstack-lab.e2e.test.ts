/**
 * The OpenStack lab is real and usable for the translator: Neutron networks, subnets, routers,
 * interfaces, tagged ports and floating IPs, and Octavia load balancers on a Neutron port's VIP with
 * listeners, pools and members, all created, filtered and then deleted in dependency order over
 * plain HTTP. Each test works in a project of its own and removes everything it made.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  expectStatus,
  field,
  labRequest,
  listField,
  stringField,
  type LabResponse,
} from '../harness/openstack/http.js';
import type { OpenStackLab } from '../harness/openstack/lab.js';
import { freshProject, sharedLab } from '../harness/openstack/test-lab.js';

type Json = Record<string, unknown>;

/**
 * How long to wait for Octavia's worker to apply a change before giving up: a safety net far above
 * the ~1 s a change takes, even with other tests writing to the lab on a loaded machine.
 */
const GIVE_UP_MS = 180_000;

/** A small Neutron/Octavia client for one project, undoing what it created when the test ends. */
class Api {
  private readonly cleanups: { what: string; undo: () => Promise<{ status: number; text: string }> }[] = [];

  constructor(
    readonly lab: OpenStackLab,
    readonly project: string,
  ) {}

  /** POST `{ [kind]: body }` to Neutron and return the created object. */
  async neutronCreate(collection: string, kind: string, body: Json): Promise<Json> {
    const url = `${this.lab.neutronUrl}/v2.0/${collection}`;
    const res = await expectStatus(201, 'POST', url, { [kind]: { project_id: this.project, ...body } });
    const created = field(res.body, kind);
    const id = stringField(created, 'id');
    this.onCleanup(`DELETE ${collection}/${id}`, () => labRequest('DELETE', `${url}/${id}`));
    return created;
  }

  neutron(method: string, path: string, body?: unknown): Promise<LabResponse> {
    return labRequest(method, `${this.lab.neutronUrl}/v2.0/${path}`, body);
  }

  async neutronList(collection: string, query: string): Promise<Json[]> {
    const res = await expectStatus(200, 'GET', `${this.lab.neutronUrl}/v2.0/${collection}?${query}`);
    return listField(res.body, collection);
  }

  octavia(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: unknown; text: string }> {
    return labRequest(method, `${this.lab.octaviaUrl}/v2/lbaas/${path}`, body);
  }

  /** Wait until the load balancer is ACTIVE again after a change. */
  async settled(lbId: string): Promise<Json> {
    let last: unknown;
    const deadline = Date.now() + GIVE_UP_MS;
    while (Date.now() < deadline) {
      const res = await expectStatus(200, 'GET', `${this.lab.octaviaUrl}/v2/lbaas/loadbalancers/${lbId}`);
      const lb = field(res.body, 'loadbalancer');
      last = lb.provisioning_status;
      if (last === 'ACTIVE') return lb;
      assert.notEqual(last, 'ERROR', `load balancer ${lbId} went to ERROR`);
      await sleep(200);
    }
    throw new Error(`load balancer ${lbId} still ${String(last)} after ${GIVE_UP_MS / 1000} s`);
  }

  /** Wait until the load balancer is deleted (gone, or shown as DELETED). */
  async deleted(lbId: string): Promise<void> {
    let last: unknown;
    const deadline = Date.now() + GIVE_UP_MS;
    while (Date.now() < deadline) {
      const res = await this.octavia('GET', `loadbalancers/${lbId}`);
      if (res.status === 404) return;
      last = field(res.body, 'loadbalancer').provisioning_status;
      if (last === 'DELETED') return;
      await sleep(200);
    }
    throw new Error(`load balancer ${lbId} still ${String(last)} after ${GIVE_UP_MS / 1000} s`);
  }

  /**
   * Undo every create, newest first. What is already gone (404) is fine; anything else that fails
   * is reported, so a leak names the call that left it rather than surfacing as "networks left".
   */
  async cleanup(): Promise<void> {
    const failed: string[] = [];
    for (const { what, undo } of this.cleanups.splice(0).reverse()) {
      const res = await undo().catch((err: unknown) => ({ status: 0, text: String(err) }));
      if (res.status !== 404 && (res.status < 200 || res.status >= 300))
        failed.push(`${what}: ${res.status} ${res.text}`);
    }
    assert.deepEqual(failed, [], `cleanup of project ${this.project} failed`);
  }

  onCleanup(what: string, undo: () => Promise<{ status: number; text: string }>): void {
    this.cleanups.push({ what, undo });
  }
}

async function api(t: TestContext): Promise<Api> {
  const client = new Api(await sharedLab(), freshProject());
  t.after(() => client.cleanup());
  return client;
}

async function assertGone(api: Api, collection: string, id: string): Promise<void> {
  const res = await api.neutron('GET', `${collection}/${id}`);
  assert.equal(res.status, 404, `${collection}/${id} should be gone`);
}

test('a network, subnet, router with an interface and a tagged port; tag filters; deleted in dependency order', async (t) => {
  const os = await api(t);
  const net = await os.neutronCreate('networks', 'network', { name: 'ns-default' });
  const netId = stringField(net, 'id');
  // Networks do not take tags in the POST body: they are set with PUT .../tags after the create.
  const tagged = await os.neutron('PUT', `networks/${netId}/tags`, { tags: ['raven', 'ns:default'] });
  assert.equal(tagged.status, 200);
  const subnet = await os.neutronCreate('subnets', 'subnet', {
    network_id: netId,
    cidr: '10.20.0.0/24',
    ip_version: 4,
    name: 'ns-default-v4',
  });
  const subnetId = stringField(subnet, 'id');
  const router = await os.neutronCreate('routers', 'router', { name: 'ns-default' });
  const routerId = stringField(router, 'id');
  const added = await os.neutron('PUT', `routers/${routerId}/add_router_interface`, { subnet_id: subnetId });
  assert.equal(added.status, 200);
  os.onCleanup(`remove the interface of router ${routerId}`, () =>
    os.neutron('PUT', `routers/${routerId}/remove_router_interface`, { subnet_id: subnetId }),
  );
  // Ports do take tags in the POST body (the tag_ports_during_bulk_creation extension driver).
  const port = await os.neutronCreate('ports', 'port', {
    network_id: netId,
    name: 'pod-a',
    tags: ['raven', 'pod:a'],
  });
  const portId = stringField(port, 'id');
  assert.deepEqual([...(port.tags as string[])].sort(), ['pod:a', 'raven']);
  const [fixed] = port.fixed_ips as { subnet_id: string; ip_address: string }[];
  assert.ok(fixed, 'the port has an address');
  assert.equal(fixed.subnet_id, subnetId);
  assert.match(fixed.ip_address, /^10\.20\.0\./);

  const byTag = await os.neutronList('networks', `tags=ns:default&project_id=${os.project}`);
  assert.deepEqual(
    byTag.map((n) => n.id),
    [netId],
  );
  const portsByTags = await os.neutronList('ports', `tags=raven,pod:a&project_id=${os.project}`);
  assert.deepEqual(
    portsByTags.map((p) => p.id),
    [portId],
  );
  assert.deepEqual(await os.neutronList('ports', `tags=pod:b&project_id=${os.project}`), []);
  const anyTag = await os.neutronList('ports', `tags-any=pod:a,pod:b&project_id=${os.project}`);
  assert.deepEqual(
    anyTag.map((p) => p.id),
    [portId],
  );

  // A network with ports left cannot go: 409 NetworkInUse.
  const inUse = await os.neutron('DELETE', `networks/${netId}`);
  assert.equal(inUse.status, 409);
  assert.match(JSON.stringify(inUse.body), /NetworkInUse/);

  assert.equal((await os.neutron('DELETE', `ports/${portId}`)).status, 204);
  assert.equal((await os.neutron('DELETE', `ports/${portId}`)).status, 404, 'deleting twice is a 404');
  const removed = await os.neutron('PUT', `routers/${routerId}/remove_router_interface`, {
    subnet_id: subnetId,
  });
  assert.equal(removed.status, 200);
  assert.equal((await os.neutron('DELETE', `routers/${routerId}`)).status, 204);
  assert.equal((await os.neutron('DELETE', `subnets/${subnetId}`)).status, 204);
  assert.equal((await os.neutron('DELETE', `networks/${netId}`)).status, 204);
  for (const [collection, id] of [
    ['ports', portId],
    ['routers', routerId],
    ['subnets', subnetId],
    ['networks', netId],
  ] as const)
    await assertGone(os, collection, id);
  assert.deepEqual(await os.neutronList('networks', `project_id=${os.project}`), []);
});

/** An external network with a subnet, and a router whose gateway is on it. */
async function externalSetup(
  os: Api,
): Promise<{ extNetId: string; routerId: string; subnetId: string; netId: string }> {
  const ext = await os.neutronCreate('networks', 'network', { name: 'public', 'router:external': true });
  const extNetId = stringField(ext, 'id');
  assert.equal(ext['router:external'], true);
  await os.neutronCreate('subnets', 'subnet', {
    network_id: extNetId,
    cidr: '172.24.4.0/24',
    ip_version: 4,
    name: 'public-v4',
  });
  const net = await os.neutronCreate('networks', 'network', { name: 'ns-web' });
  const netId = stringField(net, 'id');
  const subnet = await os.neutronCreate('subnets', 'subnet', {
    network_id: netId,
    cidr: '10.30.0.0/24',
    ip_version: 4,
  });
  const subnetId = stringField(subnet, 'id');
  const router = await os.neutronCreate('routers', 'router', {
    name: 'ns-web',
    external_gateway_info: { network_id: extNetId },
  });
  const routerId = stringField(router, 'id');
  const added = await os.neutron('PUT', `routers/${routerId}/add_router_interface`, { subnet_id: subnetId });
  assert.equal(added.status, 200);
  os.onCleanup(`remove the interface of router ${routerId}`, () =>
    os.neutron('PUT', `routers/${routerId}/remove_router_interface`, { subnet_id: subnetId }),
  );
  return { extNetId, routerId, subnetId, netId };
}

test('a floating IP from an external network on a port, released before the router and networks go', async (t) => {
  const os = await api(t);
  const { extNetId, routerId, subnetId, netId } = await externalSetup(os);
  const port = await os.neutronCreate('ports', 'port', { network_id: netId, name: 'svc-web' });
  const portId = stringField(port, 'id');
  const fip = await os.neutronCreate('floatingips', 'floatingip', {
    floating_network_id: extNetId,
    port_id: portId,
  });
  const fipId = stringField(fip, 'id');
  assert.match(stringField(fip, 'floating_ip_address'), /^172\.24\.4\./);
  assert.equal(fip.port_id, portId);
  assert.equal(fip.router_id, routerId);
  assert.match(stringField(fip, 'fixed_ip_address'), /^10\.30\.0\./);

  assert.equal((await os.neutron('DELETE', `floatingips/${fipId}`)).status, 204);
  assert.equal((await os.neutron('DELETE', `ports/${portId}`)).status, 204);
  await os.neutron('PUT', `routers/${routerId}/remove_router_interface`, { subnet_id: subnetId });
  assert.equal((await os.neutron('DELETE', `routers/${routerId}`)).status, 204);
  for (const [collection, id] of [
    ['floatingips', fipId],
    ['ports', portId],
    ['routers', routerId],
  ] as const)
    await assertGone(os, collection, id);
});

test('an Octavia load balancer on a Neutron port VIP with a listener, pool and member; 409 immutable until ACTIVE; deleted in order', async (t) => {
  const os = await api(t);
  const { extNetId, subnetId, netId } = await externalSetup(os);
  const vip = await os.neutronCreate('ports', 'port', { network_id: netId, name: 'svc-web-vip' });
  const vipPortId = stringField(vip, 'id');
  const vipAddress = (vip.fixed_ips as { ip_address: string }[])[0]?.ip_address;
  const backend = await os.neutronCreate('ports', 'port', { network_id: netId, name: 'pod-web-1' });
  const backendAddress = (backend.fixed_ips as { ip_address: string }[])[0]?.ip_address;

  const created = await os.octavia('POST', 'loadbalancers', {
    loadbalancer: {
      name: 'svc-web',
      project_id: os.project,
      vip_port_id: vipPortId,
      vip_subnet_id: subnetId,
      vip_address: vipAddress,
    },
  });
  assert.equal(created.status, 201, created.text);
  const lb = field(created.body, 'loadbalancer');
  const lbId = stringField(lb, 'id');
  os.onCleanup(`DELETE loadbalancers/${lbId} with its children`, async () => {
    const res = await os.octavia('DELETE', `loadbalancers/${lbId}?cascade=true`);
    // The VIP port goes after the load balancer, so wait for it to be gone.
    if (res.status >= 200 && res.status < 300) await os.deleted(lbId);
    return res;
  });
  assert.equal(lb.provisioning_status, 'PENDING_CREATE');
  const active = await os.settled(lbId);
  assert.equal(active.vip_port_id, vipPortId, 'the VIP is the Neutron port we gave');
  assert.equal(active.vip_address, vipAddress);

  const fip = await os.neutronCreate('floatingips', 'floatingip', {
    floating_network_id: extNetId,
    port_id: vipPortId,
  });
  assert.equal(fip.fixed_ip_address, vipAddress);

  const listener = await os.octavia('POST', 'listeners', {
    listener: {
      name: 'svc-web-80',
      project_id: os.project,
      loadbalancer_id: lbId,
      protocol: 'TCP',
      protocol_port: 80,
    },
  });
  assert.equal(listener.status, 201, listener.text);
  const listenerId = stringField(field(listener.body, 'listener'), 'id');
  await os.settled(lbId);
  // While the worker applies a change the load balancer is PENDING_UPDATE, and a second change is
  // refused. The worker takes ~1 s, so the back-to-back request almost always lands in that window;
  // on a loaded machine it may not, hence a few tries.
  let refused: { status: number; text: string } | undefined;
  for (let attempt = 0; attempt < 5 && refused === undefined; attempt++) {
    const first = await os.octavia('PUT', `listeners/${listenerId}`, {
      listener: { description: `change ${attempt}` },
    });
    assert.equal(first.status, 200, first.text);
    const second = await os.octavia('PUT', `listeners/${listenerId}`, {
      listener: { description: `too soon ${attempt}` },
    });
    if (second.status === 409) refused = second;
    else assert.equal(second.status, 200, second.text);
    await os.settled(lbId);
  }
  assert.ok(refused, 'a change while PENDING_UPDATE was never refused');
  assert.match(refused.text, /immutable/);

  const pool = await os.octavia('POST', 'pools', {
    pool: { project_id: os.project, listener_id: listenerId, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' },
  });
  assert.equal(pool.status, 201, pool.text);
  const poolId = stringField(field(pool.body, 'pool'), 'id');
  await os.settled(lbId);
  const member = await os.octavia('POST', `pools/${poolId}/members`, {
    member: { project_id: os.project, address: backendAddress, protocol_port: 8080, subnet_id: subnetId },
  });
  assert.equal(member.status, 201, member.text);
  const memberId = stringField(field(member.body, 'member'), 'id');
  await os.settled(lbId);
  const members = await expectStatus(200, 'GET', `${os.lab.octaviaUrl}/v2/lbaas/pools/${poolId}/members`);
  assert.deepEqual(
    listField(members.body, 'members').map((m) => [m.address, m.protocol_port, m.provisioning_status]),
    [[backendAddress, 8080, 'ACTIVE']],
  );

  // Dependency order, waiting for ACTIVE after each change.
  assert.equal((await os.octavia('DELETE', `pools/${poolId}/members/${memberId}`)).status, 204);
  await os.settled(lbId);
  assert.equal((await os.octavia('DELETE', `pools/${poolId}`)).status, 204);
  await os.settled(lbId);
  assert.equal((await os.octavia('DELETE', `listeners/${listenerId}`)).status, 204);
  await os.settled(lbId);
  assert.equal((await os.octavia('DELETE', `loadbalancers/${lbId}`)).status, 204);
  await os.deleted(lbId);
  const left = await os.octavia('GET', `loadbalancers?project_id=${os.project}`);
  assert.deepEqual(listField(left.body, 'loadbalancers'), [], 'no load balancer is left in the project');
  assert.equal((await os.octavia('GET', `listeners/${listenerId}`)).status, 404);
  assert.equal((await os.octavia('GET', `pools/${poolId}`)).status, 404);
  // The VIP port is the caller's: Octavia leaves it, and it goes with the rest of the network.
  await os.cleanup();
  await assertGone(os, 'ports', vipPortId);
  assert.deepEqual(await os.neutronList('networks', `project_id=${os.project}`), []);
});
