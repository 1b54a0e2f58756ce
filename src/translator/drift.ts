/**
 * Drift: what OpenStack holds compared with what the cluster implies, as a pure function of the
 * two — `compareDrift(desired, listed)` → the repairs, no call made. `resync.ts` builds the
 * desired state from the caches, lists each kind once, and applies the repairs.
 *
 * Only what this cluster's translator claims (its description, `raven:<cluster>:...`) is looked
 * at, and only for Kubernetes objects that exist: what belongs to objects that are gone is the
 * garbage collector's. A repair is either a security-group rule to delete or to create (done by
 * the pass itself, deletions first: a rule no policy implies is open access), or an object whose
 * reconcile puts the rest back (the translator's own code, which compares every attribute it owns).
 *
 * What is compared, per owner:
 * - every group Raven owns (the cluster's egress group, each namespace's, each NetworkPolicy's):
 *   present, and its rules exactly the desired set (when that is known);
 * - a namespace: its network, a subnet per family, each subnet on the router;
 * - the cluster: its service subnets on the router;
 * - a pod: one port (a second one that claims it is extra), identifying the pod, on its
 *   namespace's network, with exactly its groups;
 * - a Service: per clusterIP a VIP port and a load balancer on it; when that load balancer is
 *   ACTIVE, one listener per Service port listening on the port its description names, that
 *   listener's pool, and the pool's members (their number from the listing; the members
 *   themselves when the caller fetched them); the floating IP on the IPv4 VIP when one is wanted
 *   (one: a second one that claims the Service is extra), none when not; no load balancer, VIP port or listener of the Service beyond those.
 */
import type {
  FloatingIp,
  Network,
  Port,
  SecurityGroup,
  SecurityGroupRule,
  Subnet,
} from '../openstack/neutron-types.js';
import type { Listener, LoadBalancer, Member, MemberCreate, Pool } from '../openstack/octavia-types.js';
import { parseDescription, type OwnerKind, type Role } from './identity.js';
import { ruleKey, type RuleSpec, type RulesSync } from './security-group-rules.js';

/** The kinds a repair is counted under (`raven_translator_drift_repaired_total{kind}`). */
export type DriftKind =
  | 'security-group'
  | 'security-group-rule'
  | 'network'
  | 'subnet'
  | 'router-interface'
  | 'port'
  | 'load-balancer'
  | 'listener'
  | 'pool'
  | 'member'
  | 'floating-ip';

/** The Kubernetes object (or the cluster) a resource is made for. */
export interface OwnerRef {
  kind: OwnerKind;
  /** `namespace/name`, `name`, or `cluster`. */
  key: string;
  uid: string;
}

export type GroupRole = 'egress-sg' | 'ns-sg' | 'np-sg';

/** A group by what it is for (its id is only known from the listing). */
export interface GroupRef {
  role: GroupRole;
  uid: string;
}

export interface DesiredGroup {
  role: GroupRole;
  owner: OwnerRef;
  /** Exactly the rules it must hold; undefined while they cannot be known (not compared). */
  rules: readonly RuleSpec[] | undefined;
}

export interface DesiredNamespace {
  owner: OwnerRef;
  /** A subnet of each of these families, each on the router. */
  families: readonly (4 | 6)[];
}

export interface DesiredPod {
  owner: OwnerRef;
  namespaceUid: string;
  groups: readonly GroupRef[];
}

export interface DesiredListener {
  /** What its description ends with: `tcp-80`. */
  suffix: string;
  protocol: string;
  port: number;
  members: readonly MemberCreate[];
}

export interface DesiredService {
  owner: OwnerRef;
  /** One per clusterIP. */
  loadBalancers: readonly { vipAddress: string; listeners: readonly DesiredListener[] }[];
  /** A floating IP on the VIP port of this address (the IPv4 clusterIP); undefined: none. */
  floatingIpOn: string | undefined;
}

export interface DesiredState {
  cluster: string;
  routerId: string;
  /** The cluster's subnets that must be on the router (the service subnets). */
  clusterSubnetIds: readonly string[];
  groups: readonly DesiredGroup[];
  namespaces: readonly DesiredNamespace[];
  pods: readonly DesiredPod[];
  services: readonly DesiredService[];
}

/** What one pass listed: each kind once. */
export interface Listing {
  groups: readonly SecurityGroup[];
  networks: readonly Network[];
  subnets: readonly Subnet[];
  ports: readonly Port[];
  /** The router's own ports (its interfaces). */
  routerPorts: readonly Port[];
  floatingIps: readonly FloatingIp[];
  loadBalancers: readonly LoadBalancer[];
  listeners: readonly Listener[];
  pools: readonly Pool[];
  /** The members of the pools the caller fetched (those whose member ids changed); others absent. */
  members: ReadonlyMap<string, readonly Member[]>;
}

export type Repair =
  | {
      kind: 'security-group-rule';
      action: 'delete-rule';
      owner: OwnerRef;
      groupId: string;
      rule: SecurityGroupRule;
      what: string;
    }
  | {
      kind: 'security-group-rule';
      action: 'create-rule';
      owner: OwnerRef;
      groupId: string;
      rule: RuleSpec;
      what: string;
    }
  | { kind: DriftKind; action: 'reconcile'; owner: OwnerRef; what: string };

/** Resources indexed by the role and owner uid their description names. */
class Claimed {
  readonly #by = new Map<string, unknown[]>();

  constructor(cluster: string, lists: readonly (readonly { description?: string | undefined }[])[]) {
    for (const list of lists)
      for (const r of list) {
        const d = parseDescription(cluster, r.description);
        if (d === undefined) continue;
        const id = `${d.role}/${d.uid}`;
        const found = this.#by.get(id);
        if (found === undefined) this.#by.set(id, [r]);
        else found.push(r);
      }
  }

  of<T>(role: Role, uid: string): T[] {
    return (this.#by.get(`${role}/${uid}`) ?? []) as T[];
  }
}

/** A rule written out for logs: `ingress IPv4 tcp 22-22 from 0.0.0.0/0`. */
export function ruleText(rule: RuleSpec | SecurityGroupRule): string {
  const [direction, ethertype, protocol, min, max, prefix, group] = ruleKey(rule).split('|');
  const ports = min === '' ? '' : ` ${min}-${max ?? ''}`;
  const from = group !== '' ? ` group ${group ?? ''}` : prefix !== '' ? ` ${prefix ?? ''}` : ' anywhere';
  const way = direction === 'ingress' ? 'from' : 'to';
  return `${direction ?? ''} ${ethertype ?? ''} ${protocol === '' ? 'any protocol' : (protocol ?? '')}${ports} ${way}${from}`;
}

/** Reports one repair of drift (`TranslatorContext.driftRepaired`). */
export type DriftReporter = (kind: DriftKind, owner: OwnerRef, what: string) => void;

/** What a repair of one rule of `group` did, as the drift report says it. */
function ruleRepairText(
  rule: RuleSpec | SecurityGroupRule,
  group: { id: string; name?: string | undefined },
  repair: 'created' | 'deleted',
): string {
  const why = repair === 'created' ? 'is missing' : 'is implied by nothing';
  return `rule ${ruleText(rule)} on ${group.name ?? group.id} ${why}: ${repair}`;
}

/**
 * Report the rules a reconcile of `owner` had to create or delete in `group`, a group it made
 * before and left complete: each was changed outside Raven (the pass would have reported it, had
 * the reconcile not been under way).
 */
export function reportRuleDrift(
  ctx: { driftRepaired: DriftReporter },
  sync: RulesSync,
  owner: OwnerRef,
  group: { id: string; name?: string | undefined },
): void {
  for (const rule of sync.deleted)
    ctx.driftRepaired('security-group-rule', owner, ruleRepairText(rule, group, 'deleted'));
  for (const rule of sync.created)
    ctx.driftRepaired('security-group-rule', owner, ruleRepairText(rule, group, 'created'));
}

const suffixOf = (r: { description?: string | undefined }): string => r.description?.split(':').at(-1) ?? '';
const memberId = (m: {
  address: string;
  protocol_port: number;
  subnet_id?: string | null | undefined;
}): string => `${m.address}:${m.protocol_port}:${m.subnet_id ?? ''}`;

/**
 * The repairs that make `listed` what `desired` says: rule deletions first (each opens access no
 * policy implies), then rule creations, then the objects to reconcile (one repair per thing found
 * wrong; the caller reconciles each owner once).
 *
 * @example
 * const repairs = compareDrift(desired, listing);
 * for (const r of repairs.filter((r) => r.action === 'delete-rule')) await rules.delete(r.rule.id);
 */
export function compareDrift(desired: DesiredState, listed: Listing): Repair[] {
  const claimed = new Claimed(desired.cluster, [
    listed.groups,
    listed.networks,
    listed.subnets,
    listed.ports,
    listed.floatingIps,
    listed.loadBalancers,
    listed.listeners,
    listed.pools,
  ]);
  const out: Repair[] = [];
  const reconcile = (kind: DriftKind, owner: OwnerRef, what: string): void => {
    out.push({ kind, action: 'reconcile', owner, what });
  };
  compareGroups(desired, claimed, out, reconcile);
  const onRouter = new Set(listed.routerPorts.flatMap((p) => p.fixed_ips.map((f) => f.subnet_id)));
  for (const id of desired.clusterSubnetIds)
    if (!onRouter.has(id))
      reconcile(
        'router-interface',
        { kind: 'Cluster', key: 'cluster', uid: desired.cluster },
        `service subnet ${id} is not on the router`,
      );
  const networkOf = new Map<string, string>();
  for (const ns of desired.namespaces) {
    const [network] = claimed.of<Network>('ns-net', ns.owner.uid);
    if (network === undefined) reconcile('network', ns.owner, 'its network is missing');
    else networkOf.set(ns.owner.uid, network.id);
    for (const family of ns.families) {
      const [subnet] = claimed.of<Subnet>(family === 4 ? 'ns-subnet' : 'ns-subnet-v6', ns.owner.uid);
      if (subnet === undefined) reconcile('subnet', ns.owner, `its IPv${family} subnet is missing`);
      else if (!onRouter.has(subnet.id))
        reconcile(
          'router-interface',
          ns.owner,
          `its IPv${family} subnet ${subnet.cidr} is not on the router`,
        );
    }
  }
  for (const pod of desired.pods) comparePod(pod, claimed, networkOf.get(pod.namespaceUid), reconcile);
  for (const svc of desired.services) compareService(svc, claimed, listed, reconcile);
  const order = { 'delete-rule': 0, 'create-rule': 1, reconcile: 2 } as const;
  return out.sort((a, b) => order[a.action] - order[b.action]);
}

type Report = (kind: DriftKind, owner: OwnerRef, what: string) => void;

function compareGroups(desired: DesiredState, claimed: Claimed, out: Repair[], reconcile: Report): void {
  for (const group of desired.groups) {
    const [found] = claimed.of<SecurityGroup>(group.role, group.owner.uid);
    if (found === undefined) {
      reconcile('security-group', group.owner, `its ${group.role} security group is missing`);
      continue;
    }
    if (group.rules === undefined) continue;
    const wanted = new Map(group.rules.map((r) => [ruleKey(r), r]));
    const seen = new Set<string>();
    for (const rule of found.security_group_rules ?? []) {
      const key = ruleKey(rule);
      if (wanted.has(key) && !seen.has(key)) {
        seen.add(key);
        continue;
      }
      out.push({
        kind: 'security-group-rule',
        action: 'delete-rule',
        owner: group.owner,
        groupId: found.id,
        rule,
        what: ruleRepairText(rule, found, 'deleted'),
      });
    }
    for (const [key, rule] of wanted)
      if (!seen.has(key))
        out.push({
          kind: 'security-group-rule',
          action: 'create-rule',
          owner: group.owner,
          groupId: found.id,
          rule,
          what: ruleRepairText(rule, found, 'created'),
        });
  }
}

function comparePod(
  pod: DesiredPod,
  claimed: Claimed,
  networkId: string | undefined,
  reconcile: Report,
): void {
  const ports = claimed.of<Port>('pod-port', pod.owner.uid);
  const [port] = ports;
  if (port === undefined) {
    reconcile('port', pod.owner, 'its port is missing');
    return;
  }
  if (ports.length > 1)
    reconcile(
      'port',
      pod.owner,
      `${ports.length} ports claim the pod (${ports.map((p) => p.id).join(', ')}): all but one are deleted`,
    );
  if (port.device_owner !== 'raven:pod' || port.device_id !== pod.owner.uid)
    reconcile('port', pod.owner, `its port ${port.id} does not identify the pod`);
  if (networkId !== undefined && port.network_id !== networkId)
    reconcile('port', pod.owner, `its port ${port.id} is not on its namespace's network`);
  const ids: string[] = [];
  for (const ref of pod.groups) {
    const [group] = claimed.of<SecurityGroup>(ref.role, ref.uid);
    // A group that is missing is reported with its owner; the pod's groups are compared once it is back.
    if (group === undefined) return;
    ids.push(group.id);
  }
  const now = [...(port.security_groups ?? [])].sort();
  if (JSON.stringify(now) !== JSON.stringify(ids.sort()))
    reconcile('port', pod.owner, `its port ${port.id} is in groups ${now.join(',')}, not ${ids.join(',')}`);
}

function compareService(svc: DesiredService, claimed: Claimed, listed: Listing, reconcile: Report): void {
  const uid = svc.owner.uid;
  const vips = claimed.of<Port>('vip-port', uid);
  const lbs = claimed.of<LoadBalancer>('lb', uid);
  const listeners = claimed.of<Listener>('listener', uid);
  const pools = new Map(claimed.of<Pool>('pool', uid).map((p) => [p.id, p]));
  const addresses = svc.loadBalancers.map((lb) => lb.vipAddress);
  const holds = (p: Port, ip: string): boolean => p.fixed_ips.some((f) => f.ip_address === ip);
  for (const vip of vips)
    if (!addresses.some((ip) => holds(vip, ip)))
      reconcile('port', svc.owner, `VIP port ${vip.id} holds no clusterIP of the Service`);
  for (const lb of lbs)
    if (!addresses.includes(lb.vip_address ?? ''))
      reconcile(
        'load-balancer',
        svc.owner,
        `load balancer ${lb.id} is on ${lb.vip_address ?? '?'}, no clusterIP of it`,
      );
  for (const want of svc.loadBalancers) {
    const vip = vips.find((p) => holds(p, want.vipAddress));
    if (vip === undefined) reconcile('port', svc.owner, `no VIP port holds ${want.vipAddress}`);
    const lb = lbs.find((x) => x.vip_address === want.vipAddress);
    if (lb === undefined) {
      reconcile('load-balancer', svc.owner, `no load balancer is on ${want.vipAddress}`);
      continue;
    }
    // Octavia changes one thing at a time: what is under a load balancer that is not ACTIVE is in flux.
    if (lb.provisioning_status !== 'ACTIVE') continue;
    const under = listeners.filter((l) => l.loadbalancers?.some((x) => x.id === lb.id) ?? true);
    for (const listener of under) {
      const wanted = want.listeners.find((w) => w.suffix === suffixOf(listener));
      if (wanted === undefined)
        reconcile(
          'listener',
          svc.owner,
          `listener ${listener.id} (${listener.protocol}:${listener.protocol_port}) is for no port of the Service`,
        );
      else if (listener.protocol_port !== wanted.port || listener.protocol !== wanted.protocol)
        reconcile(
          'listener',
          svc.owner,
          `listener ${listener.id} for ${wanted.protocol}:${wanted.port} listens on ${listener.protocol}:${listener.protocol_port}`,
        );
    }
    for (const wanted of want.listeners) {
      const listener = under.find((l) => suffixOf(l) === wanted.suffix);
      if (listener === undefined) {
        reconcile(
          'listener',
          svc.owner,
          `no listener for ${wanted.protocol}:${wanted.port} on ${want.vipAddress}`,
        );
        continue;
      }
      const pool = pools.get(listener.default_pool_id ?? '');
      if (pool === undefined || suffixOf(pool) !== wanted.suffix) {
        reconcile('pool', svc.owner, `listener ${listener.id} has no pool of the Service`);
        continue;
      }
      compareMembers(svc.owner, pool, wanted, listed, reconcile);
    }
  }
  const fips = claimed.of<FloatingIp>('fip', uid);
  if (svc.floatingIpOn === undefined) {
    for (const fip of fips)
      reconcile('floating-ip', svc.owner, `floating IP ${fip.floating_ip_address} is not wanted`);
    return;
  }
  const vip = vips.find((p) => holds(p, svc.floatingIpOn ?? ''));
  const [fip] = fips;
  if (fips.length > 1)
    reconcile(
      'floating-ip',
      svc.owner,
      `${fips.length} floating IPs claim the Service (${fips.map((f) => f.floating_ip_address).join(', ')}): all but one are deleted`,
    );
  if (fip === undefined) reconcile('floating-ip', svc.owner, 'its floating IP is missing');
  else if (vip !== undefined && fip.port_id !== vip.id)
    reconcile(
      'floating-ip',
      svc.owner,
      `floating IP ${fip.floating_ip_address} is on ${fip.port_id ?? 'no port'}, not the VIP`,
    );
}

function compareMembers(
  owner: OwnerRef,
  pool: Pool,
  wanted: DesiredListener,
  listed: Listing,
  reconcile: Report,
): void {
  const count = pool.members?.length ?? 0;
  const where = `pool ${pool.id} (${wanted.protocol}:${wanted.port})`;
  if (count !== wanted.members.length) {
    reconcile('member', owner, `${where} has ${count} members, not ${wanted.members.length}`);
    return;
  }
  const fetched = listed.members.get(pool.id);
  if (fetched === undefined) return;
  const now = fetched.map(memberId).sort();
  const want = wanted.members.map(memberId).sort();
  if (JSON.stringify(now) !== JSON.stringify(want))
    reconcile('member', owner, `${where} has members ${now.join(',')}, not ${want.join(',')}`);
}
