/**
 * Service → an Octavia load balancer whose VIP is the Service's clusterIP, on a Neutron port on the
 * service subnet of its family that the translator creates (a dual-stack Service: one load
 * balancer per clusterIP, as an Octavia load balancer has one VIP); members of the VIP's family
 * (the slices of its address type, each pod's port address of it); one listener and one pool per Service port; pool
 * members from the Service's EndpointSlices (a member is the pod's Neutron port address when the
 * endpoint names a pod — left out while that pod is gone or has no port — and the endpoint address
 * when it names none); and, when an external network is configured,
 * a floating IP on the VIP port for `externalIPs` (the first one is requested) or type LoadBalancer
 * (whose status then shows the address). Every Octavia change waits for the load balancer to be
 * ACTIVE. A Service that is gone, headless or ExternalName is taken apart: floating IP, load
 * balancer (cascade), then the VIP port once the load balancer is really gone.
 */
import type { DeepReadonly } from '../cache/deep-freeze.js';
import { toObjectKey } from '../client/object-key.js';
import type { KubeObject } from '../client/kube-object.js';
import { isConflict, openStackFaultType } from '../errors/classify.js';
import type { FloatingIp, FloatingIpCreate, Port, PortCreate } from '../openstack/neutron-types.js';
import type { LoadBalancerChanges } from '../openstack/load-balancer-waiter.js';
import type {
  Listener,
  ListenerProtocol,
  LoadBalancer,
  Member,
  MemberCreate,
  Pool,
  PoolProtocol,
} from '../openstack/octavia-types.js';
import { done, requeueAfter, type HandlerResult } from '../queue/handler-result.js';
import { ensureOwned } from './adopt.js';
import { asShape, type TranslatorContext } from './context.js';
import { clusterTag, identityOf, ownerTag, roleTag, uidTag, type Owner, type Role } from './identity.js';
import { familyOf } from './cidr.js';
import { podPortAddress } from './port-annotation.js';

const KIND = 'Service';

export interface ServicePort {
  name?: string;
  port: number;
  protocol?: string;
}

export interface ServiceShape extends KubeObject {
  spec?: {
    type?: string;
    clusterIP?: string;
    clusterIPs?: string[];
    ports?: ServicePort[];
    externalIPs?: string[];
  };
  status?: { loadBalancer?: { ingress?: { ip?: string }[] } };
}

interface SliceShape extends KubeObject {
  addressType?: string;
  ports?: { name?: string; port?: number; protocol?: string }[];
  endpoints?: {
    addresses: string[];
    conditions?: { ready?: boolean };
    targetRef?: { kind?: string; name?: string; namespace?: string };
  }[];
}

export function wantsLoadBalancer(
  svc: DeepReadonly<ServiceShape> | undefined,
): svc is DeepReadonly<ServiceShape> {
  if (svc === undefined || svc.metadata?.deletionTimestamp !== undefined) return false;
  const ip = svc.spec?.clusterIP;
  return svc.spec?.type !== 'ExternalName' && ip !== undefined && ip !== '' && ip !== 'None';
}

/** The suffix of a Service port's listener and pool: `tcp-80`. */
export function listenerKey(p: DeepReadonly<ServicePort>): string {
  return `${(p.protocol ?? 'TCP').toLowerCase()}-${p.port}`;
}

export async function reconcileService(
  key: string,
  ctx: TranslatorContext,
): Promise<HandlerResult | undefined> {
  const svc = asShape<ServiceShape>(ctx.services.get(toObjectKey(key)));
  const uid = wantsLoadBalancer(svc) ? svc.metadata?.uid : undefined;
  // One list per role, for every uid of this name: this Service's resources and stale ones.
  const found = await listOwned(key, uid, ctx);
  const gone = await removeStale(key, found, ctx);
  if (gone === 'waiting') return requeueAfter(1_000);
  if (uid === undefined || svc === undefined) {
    ctx.status.forget(KIND, key);
    return done();
  }
  const owner: Owner = {
    kind: KIND,
    namespace: svc.metadata?.namespace,
    name: svc.metadata?.name ?? '',
    uid,
  };
  // A load balancer per clusterIP (a dual-stack Service has one of each family: an Octavia load
  // balancer has one VIP). The primary keeps the identity a single-stack Service has.
  const clusterIPs = clusterIPsOf(svc);
  const dropped = await removeDroppedFamilies(ctx, found, clusterIPs);
  if (dropped === 'waiting') {
    ctx.status.pending(KIND, key, "waiting for a dropped family's load balancer to be deleted");
    return requeueAfter(1_000);
  }
  const vips: Port[] = [];
  for (const [index, clusterIP] of clusterIPs.entries()) {
    const family = familyOf(clusterIP);
    const subnet = ctx.infra.serviceSubnets.find((s) => s.family === family);
    if (subnet === undefined) {
      ctx.status.failing(
        KIND,
        key,
        `clusterIP ${clusterIP} is IPv${family}, and serviceCidr has no CIDR of that family`,
      );
      return requeueAfter(30_000);
    }
    const suffix = index === 0 ? '' : `ipv${family}`;
    const vip = await ensureVipPort(
      ctx,
      owner,
      clusterIP,
      subnet.id,
      suffix,
      found.vips.mine.filter((p) => holds(p, clusterIP)),
    );
    if (vip === undefined) {
      ctx.status.failing(
        KIND,
        key,
        `clusterIP ${clusterIP} is held by a Neutron port that is not this Service's`,
      );
      return requeueAfter(30_000);
    }
    vips.push(vip);
    await syncLoadBalancer(ctx, svc, owner, {
      key,
      clusterIP,
      subnetId: subnet.id,
      suffix,
      vip,
      existing: found.lbs.mine.find((lb) => lb.vip_address === clusterIP),
    });
  }
  // A floating IP goes to the IPv4 VIP (Neutron's floating IPs are IPv4).
  const vip4 = vips.find((v) => v.fixed_ips.some((f) => familyOf(f.ip_address) === 4));
  await syncFloatingIp(ctx, svc, owner, vip4, found.fips.mine);
  ctx.status.managed(KIND, key);
  return done();
}

/** The Service's clusterIPs, the primary first (`spec.clusterIPs`, else `spec.clusterIP`). */
export function clusterIPsOf(svc: DeepReadonly<ServiceShape>): string[] {
  const ips = svc.spec?.clusterIPs ?? [svc.spec?.clusterIP ?? ''];
  return ips.filter((ip) => ip !== '' && ip !== 'None');
}

/** Whether a port holds `ip`. */
function holds(port: Port, ip: string): boolean {
  return port.fixed_ips.some((f) => f.ip_address === ip);
}

/**
 * This Service's load balancers and VIP ports on an address that is no clusterIP of it any more
 * (a dual-stack Service made single-stack): removed, the load balancer first.
 */
async function removeDroppedFamilies(
  ctx: TranslatorContext,
  found: OwnedResources,
  clusterIPs: readonly string[],
): Promise<'clean' | 'waiting'> {
  const lbs = found.lbs.mine.filter((lb) => !clusterIPs.includes(lb.vip_address ?? ''));
  for (const lb of lbs) {
    if (lb.provisioning_status?.startsWith('PENDING') === true) continue;
    await ctx.os.octavia.loadBalancers.delete(lb.id, { cascade: true });
  }
  if (lbs.length > 0) return 'waiting';
  for (const port of found.vips.mine)
    if (!clusterIPs.some((ip) => holds(port, ip))) await ctx.os.neutron.ports.delete(port.id);
  return 'clean';
}

/** One load balancer of a Service: on `vip`, with a listener and pool per Service port. */
async function syncLoadBalancer(
  ctx: TranslatorContext,
  svc: DeepReadonly<ServiceShape>,
  owner: Owner,
  target: {
    key: string;
    clusterIP: string;
    subnetId: string;
    suffix: string;
    vip: Port;
    existing: LoadBalancer | undefined;
  },
): Promise<void> {
  const wanted = new Map((svc.spec?.ports ?? []).map((p) => [listenerKey(p), p]));
  const wait = { timeoutMs: ctx.settings.loadBalancerTimeoutMs, signal: ctx.signal };
  const octavia = ctx.os.octavia;
  let changes: LoadBalancerChanges;
  let children: Children | undefined;
  if (target.existing === undefined) {
    // A new Service: nothing to list under the new load balancer. (Octavia's one-call create of a
    // load balancer with its listeners and pools leaves those PENDING_CREATE for good in the lab's
    // Octavia 11, and a pool created with members answers 500: they are created one by one.)
    const lb = await octavia.loadBalancers.create({
      ...identityOf(ctx.settings.clusterId, 'lb', owner, target.suffix),
      vip_port_id: target.vip.id,
      vip_subnet_id: target.subnetId,
      vip_address: target.clusterIP,
      ...(ctx.settings.loadBalancerProvider === undefined
        ? {}
        : { provider: ctx.settings.loadBalancerProvider }),
    });
    changes = octavia.changes(lb.id, 'changed', wait);
    children = { listeners: [], pools: [] };
    ctx.status.pending(KIND, target.key, 'waiting for the load balancer');
  } else {
    changes = octavia.changes(
      target.existing.id,
      target.existing.provisioning_status === 'ACTIVE' ? 'active' : 'unknown',
      wait,
    );
    ctx.status.pending(KIND, target.key, 'configuring listeners and members');
  }
  await syncListeners(ctx, svc, owner, wanted, changes, children, familyOf(target.clusterIP));
  await changes.settle();
}

export function protocolsOf(port: DeepReadonly<ServicePort>): {
  listener: ListenerProtocol;
  pool: PoolProtocol;
} {
  const listener = (port.protocol ?? 'TCP') as ListenerProtocol;
  return { listener, pool: listener === 'UDP' || listener === 'SCTP' ? listener : 'TCP' };
}

/** The listeners and pools of a Service's load balancer. */
interface Children {
  listeners: Listener[];
  pools: Pool[];
}

/**
 * Listeners, pools and members of the load balancer made equal to the Service's ports;
 * `known` when the caller knows them (none, under a load balancer it has just created).
 */
async function syncListeners(
  ctx: TranslatorContext,
  svc: DeepReadonly<ServiceShape>,
  owner: Owner,
  wanted: Map<string, DeepReadonly<ServicePort>>,
  changes: LoadBalancerChanges,
  known: Children | undefined,
  family: 4 | 6,
): Promise<void> {
  const c = ctx.settings.clusterId;
  const octavia = ctx.os.octavia;
  const lbId = changes.loadBalancerId;
  // A dual-stack Service has two load balancers: only this one's children.
  const underThis = (r: { loadbalancers?: { id: string }[] | undefined }): boolean =>
    r.loadbalancers === undefined || r.loadbalancers.some((lb) => lb.id === lbId);
  const { listeners, pools } = known ?? {
    listeners: (
      await octavia.listeners.list({ tags: [clusterTag(c), roleTag('listener'), uidTag(owner.uid)] })
    ).filter(underThis),
    pools: (await octavia.pools.list({ tags: [clusterTag(c), roleTag('pool'), uidTag(owner.uid)] })).filter(
      underThis,
    ),
  };
  const suffixOf = (r: { description?: string | undefined }): string =>
    r.description?.split(':').at(-1) ?? '';
  // A listener is this Service port's only while it listens where its description says (a
  // listener's port cannot be changed in place: one re-made on another port is replaced).
  const current = listeners.filter((l) => {
    const port = wanted.get(suffixOf(l));
    return port !== undefined && listenerKey({ protocol: l.protocol, port: l.protocol_port }) === suffixOf(l);
  });
  const removed = new Set<string>();
  for (const listener of listeners) {
    if (current.includes(listener)) continue;
    // Octavia cannot filter pools by listener; a listener names its pool.
    const poolId = listener.default_pool_id;
    if (poolId !== undefined && poolId !== null) {
      await changes.change(() => octavia.pools.delete(poolId));
      removed.add(poolId);
    }
    await changes.change(() => octavia.listeners.delete(listener.id));
  }
  // A pool is a listener's only while that listener points at it: one of no Service port, or left
  // behind by a listener removed (by hand or above), is removed too and made again.
  for (const pool of pools) {
    if (removed.has(pool.id)) continue;
    const listener = current.find((l) => suffixOf(l) === suffixOf(pool));
    if (listener !== undefined && listener.default_pool_id === pool.id) continue;
    await changes.change(() => octavia.pools.delete(pool.id));
    removed.add(pool.id);
  }
  for (const [suffix, port] of wanted) {
    const protocols = protocolsOf(port);
    const members = desiredMembers(ctx, svc, port, family);
    let listener = current.find((l) => suffixOf(l) === suffix);
    if (listener === undefined) {
      const identity = identityOf(c, 'listener', owner, suffix);
      listener = await changes.change(() =>
        octavia.listeners.create({
          ...identity,
          loadbalancer_id: lbId,
          protocol: protocols.listener,
          protocol_port: port.port,
        }),
      );
    }
    const pool = pools.find((p) => suffixOf(p) === suffix && !removed.has(p.id));
    if (pool === undefined) {
      const identity = identityOf(c, 'pool', owner, suffix);
      const listenerId = listener.id;
      const created = await changes.change(() =>
        octavia.pools.create({
          ...identity,
          listener_id: listenerId,
          protocol: protocols.pool,
          lb_algorithm: 'ROUND_ROBIN',
        }),
      );
      await syncMembers(ctx, members, created.id, changes, []);
      continue;
    }
    await syncMembers(ctx, members, pool.id, changes);
  }
}

/** The VIP port holding the clusterIP; undefined when someone else's port holds it. */
async function ensureVipPort(
  ctx: TranslatorContext,
  owner: Owner,
  ip: string,
  subnetId: string,
  suffix: string,
  listed: readonly Port[],
): Promise<Port | undefined> {
  const identity = identityOf(ctx.settings.clusterId, 'vip-port', owner, suffix);
  try {
    return (
      await ensureOwned<Port, PortCreate>(
        ctx.os.neutron.ports,
        identity,
        {
          network_id: ctx.infra.serviceNetworkId,
          fixed_ips: [{ subnet_id: subnetId, ip_address: ip }],
          device_owner: 'raven:vip',
          device_id: owner.uid,
        },
        {},
        true,
        listed,
      )
    ).resource;
  } catch (error) {
    if (!isConflict(error) || openStackFaultType(error) !== 'IpAddressAlreadyAllocated') throw error;
    return undefined;
  }
}

/** A pool's members for one Service port and IP family, from the EndpointSlices and the pods' ports. */
export function desiredMembers(
  ctx: TranslatorContext,
  svc: DeepReadonly<ServiceShape>,
  port: DeepReadonly<ServicePort>,
  family: 4 | 6,
): MemberCreate[] {
  const namespace = svc.metadata?.namespace ?? '';
  // The members are of the VIP's family: its slices, and each pod's port address of that family.
  const slices = (
    ctx.endpointSlices
      .byIndex('namespace', namespace)
      .filter(
        (s) => s.metadata?.labels?.['kubernetes.io/service-name'] === svc.metadata?.name,
      ) as DeepReadonly<SliceShape>[]
  ).filter((s) => (s.addressType ?? 'IPv4') === `IPv${family}`);
  const members = new Map<string, MemberCreate>();
  for (const slice of slices) {
    const slicePort =
      slice.ports?.find((p) => (p.name ?? '') === (port.name ?? '')) ??
      (slice.ports?.length === 1 ? slice.ports[0] : undefined);
    if (slicePort?.port === undefined) continue;
    for (const endpoint of slice.endpoints ?? []) {
      if (endpoint.conditions?.ready === false) continue;
      const ref = endpoint.targetRef;
      if (ref?.kind === 'Pod' && ref.name !== undefined) {
        // A pod's member is its Neutron port. A pod that is gone (the slice lags its deletion)
        // or has no port yet is left out: its endpoint address is not on any Neutron subnet and
        // may already be another pod's. The pod's port being recorded triggers this Service again.
        const pod = ctx.pods.get(toObjectKey(`${ref.namespace ?? namespace}/${ref.name}`));
        const fromPort = podPortAddress(pod, family);
        if (fromPort === undefined) continue;
        members.set(`${fromPort.ip}:${slicePort.port}`, {
          address: fromPort.ip,
          protocol_port: slicePort.port,
          subnet_id: fromPort.subnetId,
        });
        continue;
      }
      // An endpoint that names no pod (an address outside the cluster) is used as it is.
      const address = endpoint.addresses[0];
      if (address === undefined) continue;
      members.set(`${address}:${slicePort.port}`, { address, protocol_port: slicePort.port });
    }
  }
  return [...members.values()].sort((a, b) =>
    `${a.address}:${a.protocol_port}`.localeCompare(`${b.address}:${b.protocol_port}`),
  );
}

async function syncMembers(
  ctx: TranslatorContext,
  wanted: MemberCreate[],
  poolId: string,
  changes: LoadBalancerChanges,
  known?: Member[],
): Promise<void> {
  const octavia = ctx.os.octavia;
  const current: Member[] = known ?? (await octavia.members(poolId).list());
  const id = (m: { address: string; protocol_port: number; subnet_id?: string | null }): string =>
    `${m.address}:${m.protocol_port}:${m.subnet_id ?? ''}`;
  const same = current.length === wanted.length && wanted.every((w) => current.some((m) => id(m) === id(w)));
  if (same) return;
  await changes.change(() => octavia.members(poolId).replaceAll(wanted));
}

async function syncFloatingIp(
  ctx: TranslatorContext,
  svc: DeepReadonly<ServiceShape>,
  owner: Owner,
  vip: Port | undefined,
  listed: readonly FloatingIp[],
): Promise<void> {
  const external = ctx.settings.externalNetworkId;
  const identity = identityOf(ctx.settings.clusterId, 'fip', owner);
  const wanted =
    vip !== undefined &&
    external !== undefined &&
    ((svc.spec?.externalIPs?.length ?? 0) > 0 || svc.spec?.type === 'LoadBalancer');
  if (!wanted) {
    for (const fip of listed) await ctx.os.neutron.floatingIps.delete(fip.id);
    return;
  }
  const requested = svc.spec?.externalIPs?.[0];
  // More than one claims the Service (made behind Raven's back, or a crash): the one on the VIP
  // is kept, else the one with the requested address, and the others are deleted.
  const rank = (f: FloatingIp): number =>
    f.port_id === vip.id ? 0 : f.floating_ip_address === requested ? 1 : 2;
  const { resource: fip, duplicates } = await ensureOwned<FloatingIp, FloatingIpCreate>(
    ctx.os.neutron.floatingIps,
    identity,
    {
      floating_network_id: external,
      port_id: vip.id,
      ...(requested === undefined ? {} : { floating_ip_address: requested }),
    },
    {},
    false,
    [...listed].sort((a, b) => rank(a) - rank(b)),
  );
  for (const extra of duplicates) await ctx.os.neutron.floatingIps.delete(extra.id);
  if (fip.port_id !== vip.id) await ctx.os.neutron.floatingIps.associate(fip.id, vip.id);
  if (
    svc.spec?.type === 'LoadBalancer' &&
    svc.status?.loadBalancer?.ingress?.[0]?.ip !== fip.floating_ip_address
  ) {
    await ctx.patch(
      'Service',
      svc.metadata?.namespace ?? '',
      svc.metadata?.name ?? '',
      {
        metadata: { resourceVersion: svc.metadata?.resourceVersion },
        status: { loadBalancer: { ingress: [{ ip: fip.floating_ip_address }] } },
      },
      { subresource: 'status' },
    );
  }
}

interface Partitioned<T> {
  mine: T[];
  stale: T[];
}

interface OwnedResources {
  fips: Partitioned<FloatingIp>;
  lbs: Partitioned<LoadBalancer>;
  vips: Partitioned<Port>;
}

/** What was made for the Service `key`, split into this uid's (`keep`) and any other's. */
async function listOwned(
  key: string,
  keep: string | undefined,
  ctx: TranslatorContext,
): Promise<OwnedResources> {
  const c = ctx.settings.clusterId;
  const owned = (role: Role): { tags: string[] } => ({ tags: [clusterTag(c), roleTag(role), ownerTag(key)] });
  const split = <T extends { tags?: string[] | undefined }>(list: T[]): Partitioned<T> => {
    const mine = list.filter((r) => keep !== undefined && (r.tags ?? []).includes(uidTag(keep)));
    return { mine, stale: list.filter((r) => !mine.includes(r)) };
  };
  const [fips, lbs, vips] = await Promise.all([
    ctx.os.neutron.floatingIps.list(owned('fip')),
    ctx.os.octavia.loadBalancers.list(owned('lb')),
    ctx.os.neutron.ports.list(owned('vip-port')),
  ]);
  return { fips: split(fips), lbs: split(lbs), vips: split(vips) };
}

/**
 * Remove what was made for the Service `key` under another uid, in dependency order.
 * 'waiting' while a load balancer is still being deleted (its VIP port must outlive it).
 */
async function removeStale(
  key: string,
  found: OwnedResources,
  ctx: TranslatorContext,
): Promise<'clean' | 'waiting'> {
  const neutron = ctx.os.neutron;
  const octavia = ctx.os.octavia;
  for (const fip of found.fips.stale) await neutron.floatingIps.delete(fip.id);
  for (const lb of found.lbs.stale) {
    if (lb.provisioning_status?.startsWith('PENDING') === true) continue;
    await octavia.loadBalancers.delete(lb.id, { cascade: true });
  }
  if (found.lbs.stale.length > 0) {
    ctx.status.pending(KIND, key, 'waiting for the old load balancer to be deleted');
    return 'waiting';
  }
  for (const port of found.vips.stale) await neutron.ports.delete(port.id);
  return 'clean';
}
