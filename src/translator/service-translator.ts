/**
 * Service → an Octavia load balancer whose VIP is the Service's clusterIP, on a Neutron port on the
 * service subnet that the translator creates; one listener and one pool per Service port; pool
 * members from the Service's EndpointSlices (a member is the pod's Neutron port address when the
 * endpoint names a pod — left out while that pod is gone or has no port — and the endpoint address
 * when it names none); and, when an external network is configured,
 * a floating IP on the VIP port for `externalIPs` (the first one is requested) or type LoadBalancer
 * (whose status then shows the address). Every Octavia change waits for the load balancer to be
 * ACTIVE. A Service that is gone, headless or ExternalName is taken apart: floating IP, load
 * balancer (cascade), then the VIP port once the load balancer is really gone.
 */
import type { DeepReadonly } from '../cache/deep-freeze.js';
import { toObjectKey } from '../cache/object-key.js';
import type { KubeObject } from '../client/kube-object.js';
import { isConflict, openStackFaultType } from '../errors/classify.js';
import type { FloatingIp, FloatingIpCreate, Port, PortCreate } from '../openstack/neutron-types.js';
import type {
  Listener,
  ListenerProtocol,
  LoadBalancer,
  Member,
  MemberCreate,
  Pool,
} from '../openstack/octavia-types.js';
import { done, requeueAfter, type HandlerResult } from '../queue/handler-result.js';
import { ensureOwned } from './adopt.js';
import { asShape, type TranslatorContext } from './context.js';
import { clusterTag, identityOf, ownerTag, roleTag, uidTag, type Owner, type Role } from './identity.js';
import { podPortAddress } from './pod-translator.js';

const KIND = 'Service';

interface ServicePort {
  name?: string;
  port: number;
  protocol?: string;
}

interface ServiceShape extends KubeObject {
  spec?: { type?: string; clusterIP?: string; ports?: ServicePort[]; externalIPs?: string[] };
  status?: { loadBalancer?: { ingress?: { ip?: string }[] } };
}

interface SliceShape extends KubeObject {
  ports?: { name?: string; port?: number; protocol?: string }[];
  endpoints?: {
    addresses: string[];
    conditions?: { ready?: boolean };
    targetRef?: { kind?: string; name?: string; namespace?: string };
  }[];
}

function wantsLoadBalancer(svc: DeepReadonly<ServiceShape> | undefined): svc is DeepReadonly<ServiceShape> {
  if (svc === undefined || svc.metadata?.deletionTimestamp !== undefined) return false;
  const ip = svc.spec?.clusterIP;
  return svc.spec?.type !== 'ExternalName' && ip !== undefined && ip !== '' && ip !== 'None';
}

function listenerKey(p: DeepReadonly<ServicePort>): string {
  return `${(p.protocol ?? 'TCP').toLowerCase()}-${p.port}`;
}

export async function reconcileService(
  key: string,
  ctx: TranslatorContext,
): Promise<HandlerResult | undefined> {
  const svc = asShape<ServiceShape>(ctx.services.get(toObjectKey(key)));
  const uid = wantsLoadBalancer(svc) ? svc.metadata?.uid : undefined;
  const gone = await removeStale(key, uid, ctx);
  if (gone === 'waiting') return requeueAfter(1_000);
  if (uid === undefined || svc === undefined) {
    ctx.status.forget(KIND, key);
    return done();
  }
  const c = ctx.settings.clusterId;
  const owner: Owner = {
    kind: KIND,
    namespace: svc.metadata?.namespace,
    name: svc.metadata?.name ?? '',
    uid,
  };
  const clusterIP = svc.spec?.clusterIP ?? '';
  const vip = await ensureVipPort(ctx, owner, clusterIP);
  if (vip === undefined) {
    ctx.status.failing(
      KIND,
      key,
      `clusterIP ${clusterIP} is held by a Neutron port that is not this Service's`,
    );
    return requeueAfter(30_000);
  }
  const octavia = ctx.os.octavia;
  const { resource: created } = await ensureOwned<LoadBalancer, object>(
    octavia.loadBalancers,
    identityOf(c, 'lb', owner),
    {
      vip_port_id: vip.id,
      vip_subnet_id: ctx.infra.serviceSubnetId,
      vip_address: clusterIP,
      ...(ctx.settings.loadBalancerProvider === undefined
        ? {}
        : { provider: ctx.settings.loadBalancerProvider }),
    },
  );
  const wait = { timeoutMs: ctx.settings.loadBalancerTimeoutMs, signal: ctx.signal };
  const lb = await octavia.waitForActive(created.id, wait);
  ctx.status.pending(KIND, key, 'configuring listeners and members');

  const wanted = new Map((svc.spec?.ports ?? []).map((p) => [listenerKey(p), p]));
  const listeners = await octavia.listeners.list({ tags: [clusterTag(c), roleTag('listener'), uidTag(uid)] });
  for (const listener of listeners) {
    const suffix = listener.description?.split(':').at(-1) ?? '';
    if (!wanted.has(suffix)) {
      // Octavia cannot filter pools by listener; a listener names its pool.
      const poolId = listener.default_pool_id;
      if (poolId !== undefined && poolId !== null)
        await octavia.whenActive(lb.id, () => octavia.pools.delete(poolId), wait);
      await octavia.whenActive(lb.id, () => octavia.listeners.delete(listener.id), wait);
    }
  }
  for (const [suffix, port] of wanted) {
    const protocol = (port.protocol ?? 'TCP') as ListenerProtocol;
    const listener = await octavia.whenActive(
      lb.id,
      async () =>
        (
          await ensureOwned<Listener, object>(octavia.listeners, identityOf(c, 'listener', owner, suffix), {
            loadbalancer_id: lb.id,
            protocol,
            protocol_port: port.port,
          })
        ).resource,
      wait,
    );
    const pool = await octavia.whenActive(
      lb.id,
      async () =>
        (
          await ensureOwned<Pool, object>(octavia.pools, identityOf(c, 'pool', owner, suffix), {
            listener_id: listener.id,
            protocol: protocol === 'UDP' || protocol === 'SCTP' ? protocol : 'TCP',
            lb_algorithm: 'ROUND_ROBIN',
          })
        ).resource,
      wait,
    );
    await syncMembers(ctx, svc, port, pool.id, lb.id);
  }
  await syncFloatingIp(ctx, svc, owner, vip);
  ctx.status.managed(KIND, key);
  return done();
}

/** The VIP port holding the clusterIP; undefined when someone else's port holds it. */
async function ensureVipPort(ctx: TranslatorContext, owner: Owner, ip: string): Promise<Port | undefined> {
  const identity = identityOf(ctx.settings.clusterId, 'vip-port', owner);
  try {
    return (
      await ensureOwned<Port, PortCreate>(ctx.os.neutron.ports, identity, {
        network_id: ctx.infra.serviceNetworkId,
        fixed_ips: [{ subnet_id: ctx.infra.serviceSubnetId, ip_address: ip }],
        device_owner: 'raven:vip',
        device_id: owner.uid,
      })
    ).resource;
  } catch (error) {
    if (!isConflict(error) || openStackFaultType(error) !== 'IpAddressAlreadyAllocated') throw error;
    return undefined;
  }
}

function desiredMembers(
  ctx: TranslatorContext,
  svc: DeepReadonly<ServiceShape>,
  port: DeepReadonly<ServicePort>,
): MemberCreate[] {
  const namespace = svc.metadata?.namespace ?? '';
  const slices = ctx.endpointSlices
    .byIndex('namespace', namespace)
    .filter(
      (s) => s.metadata?.labels?.['kubernetes.io/service-name'] === svc.metadata?.name,
    ) as DeepReadonly<SliceShape>[];
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
        const fromPort = podPortAddress(pod);
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
  svc: DeepReadonly<ServiceShape>,
  port: DeepReadonly<ServicePort>,
  poolId: string,
  lbId: string,
): Promise<void> {
  const octavia = ctx.os.octavia;
  const wanted = desiredMembers(ctx, svc, port);
  const current: Member[] = await octavia.members(poolId).list();
  const id = (m: { address: string; protocol_port: number; subnet_id?: string | null }): string =>
    `${m.address}:${m.protocol_port}:${m.subnet_id ?? ''}`;
  const same = current.length === wanted.length && wanted.every((w) => current.some((m) => id(m) === id(w)));
  if (same) return;
  const wait = { timeoutMs: ctx.settings.loadBalancerTimeoutMs, signal: ctx.signal };
  await octavia.whenActive(lbId, () => octavia.members(poolId).replaceAll(wanted), wait);
  await octavia.waitForActive(lbId, wait);
}

async function syncFloatingIp(
  ctx: TranslatorContext,
  svc: DeepReadonly<ServiceShape>,
  owner: Owner,
  vip: Port,
): Promise<void> {
  const external = ctx.settings.externalNetworkId;
  const identity = identityOf(ctx.settings.clusterId, 'fip', owner);
  const wanted =
    external !== undefined && ((svc.spec?.externalIPs?.length ?? 0) > 0 || svc.spec?.type === 'LoadBalancer');
  if (!wanted) {
    for (const fip of await ctx.os.neutron.floatingIps.list({ tags: identity.tags }))
      await ctx.os.neutron.floatingIps.delete(fip.id);
    return;
  }
  const requested = svc.spec?.externalIPs?.[0];
  const { resource: fip } = await ensureOwned<FloatingIp, FloatingIpCreate>(
    ctx.os.neutron.floatingIps,
    identity,
    {
      floating_network_id: external,
      port_id: vip.id,
      ...(requested === undefined ? {} : { floating_ip_address: requested }),
    },
    {},
    false,
  );
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

/**
 * Remove what was made for the Service `key` under any uid but `keep`, in dependency order.
 * 'waiting' while a load balancer is still being deleted (its VIP port must outlive it).
 */
async function removeStale(
  key: string,
  keep: string | undefined,
  ctx: TranslatorContext,
): Promise<'clean' | 'waiting'> {
  const c = ctx.settings.clusterId;
  const owned = (role: Role): { tags: string[] } => ({ tags: [clusterTag(c), roleTag(role), ownerTag(key)] });
  const stale = <T extends { tags?: string[] | undefined }>(list: T[]): T[] =>
    list.filter((r) => keep === undefined || !(r.tags ?? []).includes(uidTag(keep)));
  const neutron = ctx.os.neutron;
  const octavia = ctx.os.octavia;
  for (const fip of stale(await neutron.floatingIps.list(owned('fip'))))
    await neutron.floatingIps.delete(fip.id);
  const lbs = stale(await octavia.loadBalancers.list(owned('lb')));
  for (const lb of lbs) {
    if (lb.provisioning_status === 'PENDING_DELETE') continue;
    if (lb.provisioning_status?.startsWith('PENDING') === true) continue;
    await octavia.loadBalancers.delete(lb.id, { cascade: true });
  }
  if (lbs.length > 0) {
    ctx.status.pending(KIND, key, 'waiting for the old load balancer to be deleted');
    return 'waiting';
  }
  for (const port of stale(await neutron.ports.list(owned('vip-port')))) await neutron.ports.delete(port.id);
  return 'clean';
}
