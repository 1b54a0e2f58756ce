/**
 * The resync pass: every `resyncSeconds`, what OpenStack holds is compared with what the cluster
 * implies, without waiting for a Kubernetes event, and what was changed behind the translator's
 * back is put back.
 *
 * Cost: each kind is listed once per pass, filtered by the cluster's tag (security groups with
 * their rules, networks, subnets, ports, the router's ports, floating IPs, load balancers,
 * listeners, pools with their member ids): 9 calls, whatever the number of objects, and no call
 * per object — except a pool's members, fetched only when the pool's member ids changed since
 * the last pass (Raven's own member updates, or a change behind its back).
 *
 * Order: rules that no policy implies are deleted first (each one is open access), right after the
 * listing; then missing rules are created; then each object found wrong is handed to its
 * controller, whose reconcile (the translator's own code) puts the rest back. A repair is logged
 * once (a drift handed to a reconcile that has not started by the next pass is not logged
 * again), counted per kind, and only counted when it changed something (a rule found already gone
 * or already there was someone else's repair). An object whose reconcile runs during the pass,
 * that is pending or failing, or that was never reconciled yet, is left to its reconcile (which
 * compares the same things), except for rule deletions, which are never postponed. What belongs to objects that are gone is handed to
 * their reconciles too, as the garbage collector does.
 */
import type { DeepReadonly } from '../cache/deep-freeze.js';
import type { KubeObject } from '../client/kube-object.js';
import { toObjectKey } from '../client/object-key.js';
import type { Member, Pool } from '../openstack/octavia-types.js';
import type { Clock } from '../util/clock.js';
import type { TranslatorContext } from './context.js';
import { familyOf } from './cidr.js';
import {
  compareDrift,
  type DesiredGroup,
  type DesiredPod,
  type DesiredService,
  type DesiredState,
  type DriftKind,
  type Listing,
  type OwnerRef,
  type Repair,
} from './drift.js';
import { enqueueOrphans, type Enqueue } from './garbage-collector.js';
import { clusterTag, parseDescription } from './identity.js';
import { namespaceRules } from './namespace-translator.js';
import { podGroupPlan, viewOf } from './policy-translator.js';
import { policyRules } from './policy-rules.js';
import { wantsPort } from './pod-translator.js';
import { createRule, DEFAULT_EGRESS } from './security-group-rules.js';
import {
  clusterIPsOf,
  desiredMembers,
  listenerKey,
  protocolsOf,
  wantsLoadBalancer,
  type ServiceShape,
} from './service-translator.js';

/** What a pass reports. */
export interface ResyncSummary {
  /** Repairs made (counted), by kind. */
  repaired: Partial<Record<DriftKind, number>>;
  /** OpenStack calls the pass made to list (the pools' members included). */
  listCalls: number;
  durationMs: number;
}

export interface ResyncDeps {
  enqueue: Enqueue;
  /** Re-create the cluster's own resources (router interfaces of the service subnets). */
  repairInfrastructure: () => Promise<void>;
  clock: Clock;
}

/**
 * What passes remember: each pool's member ids at the last pass, to fetch only changed pools; and
 * the owners a pass handed to their reconcile, with the reconciles started by then (a
 * `TranslationStatus` mark), so that a drift whose reconcile is still queued at the next
 * pass is not logged and counted a second time.
 */
export class ResyncMemory {
  readonly poolMembers = new Map<string, string>();
  readonly handedOver = new Map<string, number>();
}

const memberIds = (pool: Pool): string =>
  (pool.members ?? [])
    .map((m) => m.id)
    .sort()
    .join(',');

/** List each kind once (by the cluster's tag), and the members of the pools whose member ids changed. */
export async function listForResync(
  ctx: TranslatorContext,
  memory: ResyncMemory,
): Promise<{ listing: Listing; calls: number }> {
  const neutron = ctx.os.neutron;
  const octavia = ctx.os.octavia;
  const mine = { tags: [clusterTag(ctx.settings.clusterId)] };
  // All at once: the pass's first repairs (rules no policy implies) wait for the slowest list only.
  const [groups, networks, subnets, ports, routerPorts, floatingIps, loadBalancers, listeners, pools] =
    await Promise.all([
      neutron.securityGroups.list(mine),
      neutron.networks.list(mine),
      neutron.subnets.list(mine),
      neutron.ports.list(mine),
      neutron.ports.list({ device_id: ctx.infra.routerId }),
      neutron.floatingIps.list(mine),
      octavia.loadBalancers.list(mine),
      octavia.listeners.list(mine),
      octavia.pools.list(mine),
    ]);
  const members = new Map<string, Member[]>();
  const seen = new Set<string>();
  for (const pool of pools) {
    seen.add(pool.id);
    const ids = memberIds(pool);
    const before = memory.poolMembers.get(pool.id);
    // A pool seen for the first time was just made, or the translator just started (and its
    // start-up reconciles compared every pool's members): its ids are only remembered.
    if (before !== undefined && before !== ids) members.set(pool.id, await octavia.members(pool.id).list());
    memory.poolMembers.set(pool.id, ids);
  }
  for (const id of memory.poolMembers.keys()) if (!seen.has(id)) memory.poolMembers.delete(id);
  return {
    listing: {
      groups,
      networks,
      subnets,
      ports,
      routerPorts,
      floatingIps,
      loadBalancers,
      listeners,
      pools,
      members,
    },
    calls: 9 + members.size,
  };
}

/** What the cluster implies, from the caches (and the namespaces' subnets as listed). */
export function desiredState(ctx: TranslatorContext, listed: Pick<Listing, 'subnets'>): DesiredState {
  const c = ctx.settings.clusterId;
  const infra = ctx.infra;
  const cluster: OwnerRef = { kind: 'Cluster', key: 'cluster', uid: c };
  const subnets = new Map<string, Map<string, string>>();
  for (const s of listed.subnets) {
    const d = parseDescription(c, s.description);
    if (d === undefined || d.kind !== 'Namespace') continue;
    const of = subnets.get(d.uid) ?? new Map<string, string>();
    of.set(d.role, s.cidr);
    subnets.set(d.uid, of);
  }
  // A namespace's subnet CIDRs, one per family in the pools' order; undefined until all exist.
  const cidrsOf = (uid: string | undefined): string[] | undefined => {
    const cidrs = infra.subnetPools.map(({ family }) =>
      subnets.get(uid ?? '')?.get(family === 4 ? 'ns-subnet' : 'ns-subnet-v6'),
    );
    return cidrs.every((x): x is string => x !== undefined) ? cidrs : undefined;
  };
  const live = (o: DeepReadonly<KubeObject>): boolean => o.metadata?.deletionTimestamp === undefined;
  const ownerOf = (kind: OwnerRef['kind'], o: DeepReadonly<KubeObject>): OwnerRef => ({
    kind,
    key:
      o.metadata?.namespace === undefined
        ? (o.metadata?.name ?? '')
        : `${o.metadata.namespace}/${o.metadata.name ?? ''}`,
    uid: o.metadata?.uid ?? '',
  });
  const groups: DesiredGroup[] = [{ role: 'egress-sg', owner: cluster, rules: DEFAULT_EGRESS }];
  const namespaces = ctx.namespaces.list().filter(live);
  const serviceCidrs = infra.serviceSubnets.map((s) => s.cidr);
  for (const ns of namespaces) {
    const cidrs = cidrsOf(ns.metadata?.uid);
    groups.push({
      role: 'ns-sg',
      owner: ownerOf('Namespace', ns),
      rules: cidrs === undefined ? undefined : namespaceRules(cidrs, serviceCidrs),
    });
  }
  const view = {
    ...viewOf(ctx),
    subnetCidrs: (name: string) => cidrsOf(ctx.namespaces.get(toObjectKey(name))?.metadata?.uid),
  };
  for (const policy of ctx.networkPolicies.list().filter(live)) {
    const { rules, waitingFor } = policyRules(policy, view);
    groups.push({
      role: 'np-sg',
      owner: ownerOf('NetworkPolicy', policy),
      rules: waitingFor.length > 0 ? undefined : rules,
    });
  }
  return {
    cluster: c,
    routerId: infra.routerId,
    clusterSubnetIds: infra.serviceSubnets.map((s) => s.id),
    groups,
    namespaces: namespaces.map((ns) => ({
      owner: ownerOf('Namespace', ns),
      families: infra.subnetPools.map((p) => p.family),
    })),
    pods: desiredPods(ctx, c, ownerOf),
    services: desiredServices(ctx, ownerOf),
  };
}

function desiredPods(
  ctx: TranslatorContext,
  cluster: string,
  ownerOf: (kind: OwnerRef['kind'], o: DeepReadonly<KubeObject>) => OwnerRef,
): DesiredPod[] {
  const out: DesiredPod[] = [];
  for (const pod of ctx.pods.list()) {
    if (!wantsPort(pod)) continue;
    const ns = ctx.namespaces.get(toObjectKey(pod.metadata?.namespace ?? ''));
    if (ns === undefined || ns.metadata?.deletionTimestamp !== undefined) continue;
    const plan = podGroupPlan(ctx, pod);
    out.push({
      owner: ownerOf('Pod', pod),
      namespaceUid: ns.metadata?.uid ?? '',
      groups: [
        ...plan.policies.map((p) => ({ role: 'np-sg' as const, uid: p.metadata?.uid ?? '' })),
        ...(plan.namespaceGroup ? [{ role: 'ns-sg' as const, uid: ns.metadata?.uid ?? '' }] : []),
        ...(plan.egressGroup ? [{ role: 'egress-sg' as const, uid: cluster }] : []),
      ],
    });
  }
  return out;
}

function desiredServices(
  ctx: TranslatorContext,
  ownerOf: (kind: OwnerRef['kind'], o: DeepReadonly<KubeObject>) => OwnerRef,
): DesiredService[] {
  const out: DesiredService[] = [];
  for (const object of ctx.services.list()) {
    const svc = object as DeepReadonly<ServiceShape>;
    if (!wantsLoadBalancer(svc)) continue;
    const ips = clusterIPsOf(svc);
    // A clusterIP of a family the service CIDRs lack is reported failing by the Service's pass.
    if (!ips.every((ip) => ctx.infra.serviceSubnets.some((s) => s.family === familyOf(ip)))) continue;
    const external =
      ctx.settings.externalNetworkId !== undefined &&
      ((svc.spec?.externalIPs?.length ?? 0) > 0 || svc.spec?.type === 'LoadBalancer');
    out.push({
      owner: ownerOf('Service', svc),
      loadBalancers: ips.map((ip) => ({
        vipAddress: ip,
        listeners: (svc.spec?.ports ?? []).map((p) => ({
          suffix: listenerKey(p),
          protocol: protocolsOf(p).listener,
          port: p.port,
          members: desiredMembers(ctx, svc, p, familyOf(ip)),
        })),
      })),
      floatingIpOn: external ? ips.find((ip) => familyOf(ip) === 4) : undefined,
    });
  }
  return out;
}

/** One pass: list, compare, repair. */
export async function resync(
  ctx: TranslatorContext,
  memory: ResyncMemory,
  deps: ResyncDeps,
): Promise<ResyncSummary> {
  const started = deps.clock.now();
  const mark = ctx.status.mark();
  const { listing, calls } = await listForResync(ctx, memory);
  enqueueOrphans(
    ctx,
    Object.values(listing).filter(Array.isArray).flat() as { description?: string }[],
    deps.enqueue,
  );
  const repairs = compareDrift(desiredState(ctx, listing), listing);
  const repaired: ResyncSummary['repaired'] = {};
  const made = (repair: Repair): void => {
    repaired[repair.kind] = (repaired[repair.kind] ?? 0) + 1;
    ctx.driftRepaired(repair.kind, repair.owner, repair.what);
  };
  // Left to a reconcile that runs now, to the retries of one pending or failing, or to the first
  // reconcile of an object not reconciled yet (just created).
  const leftAlone = (owner: OwnerRef): boolean =>
    owner.kind !== 'Cluster' &&
    (ctx.status.busySince(owner.kind, owner.key, mark) ||
      ctx.status.get(owner.kind, owner.key)?.state !== 'managed');
  // Handed to its reconcile by an earlier pass, which has not started yet (a long queue): the
  // repair is under way, already logged and counted.
  const queued = (owner: OwnerRef, id: string): boolean => {
    const at = memory.handedOver.get(id);
    if (at === undefined) return false;
    if (!ctx.status.busySince(owner.kind, owner.key, at)) return true;
    memory.handedOver.delete(id);
    return false;
  };
  const rules = ctx.os.neutron.securityGroupRules;
  const reconciled = new Set<string>();
  for (const repair of repairs) {
    if (repair.action === 'delete-rule') {
      if ((await rules.delete(repair.rule.id)) === 'deleted') made(repair);
      continue;
    }
    if (leftAlone(repair.owner)) continue;
    if (repair.action === 'create-rule') {
      if (await createRule(rules, repair.groupId, repair.rule)) made(repair);
      continue;
    }
    const id = `${repair.owner.kind}/${repair.owner.key}`;
    if (!reconciled.has(id) && queued(repair.owner, id)) continue;
    made(repair);
    if (reconciled.has(id)) continue;
    reconciled.add(id);
    if (repair.owner.kind === 'Cluster') await deps.repairInfrastructure();
    else {
      memory.handedOver.set(id, ctx.status.mark());
      deps.enqueue(repair.owner.kind, repair.owner.key);
    }
  }
  return { repaired, listCalls: calls, durationMs: deps.clock.now() - started };
}
