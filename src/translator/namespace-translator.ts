/**
 * Namespace → a network, a subnet per family allocated from the pod subnet pools and attached to
 * the router, the pool of pre-created ports when pools are on, and a security group, the namespace's default ingress (its own subnet and the service subnet
 * may reach its pods), whose rules are made equal to that on every pass. (Egress anywhere is the
 * cluster's egress group, kept apart so that a NetworkPolicy can isolate either direction alone.)
 * A namespace that is gone or terminating is taken apart in dependency order once its pods' ports
 * are gone (its pool's ports first): router interfaces, subnets, network, security group.
 */
import type { KubeObject } from '../client/kube-object.js';
import type { DeepReadonly } from '../cache/deep-freeze.js';
import { toObjectKey } from '../client/object-key.js';
import type {
  Network,
  NetworkCreate,
  SecurityGroup,
  SecurityGroupCreate,
  Subnet,
  SubnetCreate,
} from '../openstack/neutron-types.js';
import { done, requeueAfter, type HandlerResult } from '../queue/handler-result.js';
import { ensureOwned, findOwned } from './adopt.js';
import type { TranslatorContext } from './context.js';
import type { NamespaceNetwork } from './namespace-network.js';
import { identityOf, ownerTag, clusterTag, roleTag, type Owner } from './identity.js';
import { familyOf } from './cidr.js';
import { reportRuleDrift } from './drift.js';
import { ensureRouterInterface, removeRouterInterface, type FamilySubnet } from './infrastructure.js';
import { syncRules, type RuleSpec } from './security-group-rules.js';

const KIND = 'Namespace';

/** The role of a namespace's subnet of `family`. */
function subnetRole(family: 4 | 6): 'ns-subnet' | 'ns-subnet-v6' {
  return family === 4 ? 'ns-subnet' : 'ns-subnet-v6';
}

function ownerOf(ns: DeepReadonly<KubeObject>): Owner {
  return { kind: KIND, name: ns.metadata?.name ?? '', uid: ns.metadata?.uid ?? '' };
}

/**
 * The network of namespace `name`, when it is ready. What the namespace's own reconcile (or an
 * earlier lookup) found is remembered per namespace uid, so a pod costs no lookups; a pod's port
 * create that finds it gone makes it be looked up again, and the namespace's reconcile, which
 * checks every resource on each pass, replaces it.
 */
export async function namespaceNetwork(
  ctx: TranslatorContext,
  name: string,
): Promise<NamespaceNetwork | undefined> {
  const ns = ctx.namespaces.get(toObjectKey(name));
  if (ns === undefined) return undefined;
  const owner = ownerOf(ns);
  const known = ctx.namespaceNetworks.get(name);
  if (known?.uid === owner.uid) return known.network;
  const c = ctx.settings.clusterId;
  const [network] = await findOwned<Network>(ctx.os.neutron.networks, identityOf(c, 'ns-net', owner));
  const subnets: FamilySubnet[] = [];
  for (const { family } of ctx.infra.subnetPools) {
    const [subnet] = await findOwned<Subnet>(
      ctx.os.neutron.subnets,
      identityOf(c, subnetRole(family), owner),
    );
    if (subnet === undefined) return undefined;
    subnets.push({ id: subnet.id, cidr: subnet.cidr, family });
  }
  const [group] = await findOwned<SecurityGroup>(
    ctx.os.neutron.securityGroups,
    identityOf(c, 'ns-sg', owner),
  );
  if (network === undefined || group === undefined) return undefined;
  const found = { networkId: network.id, subnets, securityGroupId: group.id };
  ctx.namespaceNetworks.set(name, { uid: owner.uid, network: found });
  return found;
}

/** Look the network of namespace `name` up again next time (a call found it gone). */
export function forgetNamespaceNetwork(ctx: TranslatorContext, name: string): void {
  ctx.namespaceNetworks.delete(name);
}

/**
 * A namespace group's rules: its own subnets (its pods) and the service subnets (load balancers)
 * reach its pods, in each family. Addresses rather than a remote group, so that a pod whose port
 * drops the group (a NetworkPolicy isolates its ingress) still reaches the other pods of its
 * namespace.
 */
export function namespaceRules(subnetCidrs: readonly string[], serviceCidrs: readonly string[]): RuleSpec[] {
  return [...subnetCidrs, ...serviceCidrs].map((cidr) => ({
    direction: 'ingress',
    ethertype: familyOf(cidr) === 4 ? 'IPv4' : 'IPv6',
    remote_ip_prefix: cidr,
  }));
}

export async function reconcileNamespace(
  key: string,
  ctx: TranslatorContext,
): Promise<HandlerResult | undefined> {
  const ns = ctx.namespaces.get(toObjectKey(key));
  if (ns === undefined || ns.metadata?.deletionTimestamp !== undefined) return teardown(key, ns, ctx);
  const c = ctx.settings.clusterId;
  const owner = ownerOf(ns);
  const neutron = ctx.os.neutron;
  // Managed: an earlier reconcile of this namespace left its group's rules complete, so a rule
  // this one has to put back or take away was changed outside Raven.
  const wasManaged = ctx.status.get(KIND, key)?.state === 'managed';
  const network = await ensureOwned<Network, NetworkCreate>(
    neutron.networks,
    identityOf(c, 'ns-net', owner),
    {},
  );
  const subnets: FamilySubnet[] = [];
  for (const pool of ctx.infra.subnetPools) {
    const subnet = await ensureOwned<Subnet, SubnetCreate>(
      neutron.subnets,
      identityOf(c, subnetRole(pool.family), owner),
      {
        network_id: network.resource.id,
        ip_version: pool.family,
        subnetpool_id: pool.id,
        prefixlen: pool.family === 4 ? ctx.settings.podPrefixLength : ctx.settings.podPrefixLengthIPv6,
        enable_dhcp: false,
      },
    );
    subnets.push({ id: subnet.resource.id, cidr: subnet.resource.cidr, family: pool.family });
  }
  const group = await ensureOwned<SecurityGroup, SecurityGroupCreate>(
    neutron.securityGroups,
    identityOf(c, 'ns-sg', owner),
    {},
  );
  // Every pass, not only the one that created the group: a rule lost to a timeout or a crash
  // between the group and its rules is put back.
  const rules = await syncRules(
    neutron.securityGroupRules,
    group.resource.id,
    namespaceRules(
      subnets.map((s) => s.cidr),
      ctx.infra.serviceSubnets.map((s) => s.cidr),
    ),
    group.resource.security_group_rules,
  );
  if (wasManaged && !group.created)
    reportRuleDrift(ctx, rules, { kind: KIND, key, uid: owner.uid }, group.resource);
  for (const subnet of subnets) await ensureRouterInterface(ctx.os, ctx.infra.routerId, subnet.id);
  const net = { networkId: network.resource.id, subnets, securityGroupId: group.resource.id };
  ctx.namespaceNetworks.set(key, { uid: owner.uid, network: net });
  // The pool of pre-created ports: filled up, trimmed, or emptied when pools are off.
  await ctx.portPools.sync(ctx, key, owner.uid, net);
  ctx.status.managed(KIND, key);
  return done();
}

/** Remove what was made for the namespace `key` (any uid), ports first. */
async function teardown(
  key: string,
  ns: DeepReadonly<KubeObject> | undefined,
  ctx: TranslatorContext,
): Promise<HandlerResult> {
  ctx.namespaceNetworks.delete(key);
  const c = ctx.settings.clusterId;
  const neutron = ctx.os.neutron;
  const byOwner = (role: Parameters<typeof roleTag>[0]): { tags: string[] } => ({
    tags: [clusterTag(c), roleTag(role), ownerTag(key)],
  });
  const networks = await neutron.networks.list(byOwner('ns-net'));
  await ctx.portPools.remove(ctx, key);
  // Pods' ports go first (their own reconciles remove them); wait for them rather than fight.
  for (const network of networks) {
    const ports = await neutron.ports.list({
      network_id: network.id,
      tags: [clusterTag(c), roleTag('pod-port')],
    });
    if (ports.length > 0) {
      ctx.status.pending(KIND, key, `waiting for ${ports.length} pod ports to be removed`);
      return requeueAfter(2_000);
    }
  }
  // Both families in one list (Neutron 21 answers 500 to `tags` with `tags-any`): its subnets by owner, then role.
  const subnetRoles = [roleTag('ns-subnet'), roleTag('ns-subnet-v6')];
  const subnets = (await neutron.subnets.list({ tags: [clusterTag(c), ownerTag(key)] })).filter((s) =>
    subnetRoles.some((r) => s.tags?.includes(r) === true),
  );
  for (const subnet of subnets) {
    await removeRouterInterface(ctx.os, ctx.infra.routerId, subnet.id);
    await neutron.subnets.delete(subnet.id);
  }
  for (const network of networks) await neutron.networks.delete(network.id);
  for (const group of await neutron.securityGroups.list(byOwner('ns-sg')))
    await neutron.securityGroups.delete(group.id);
  if (ns === undefined) ctx.status.forget(KIND, key);
  else ctx.status.pending(KIND, key, 'namespace terminating');
  return done();
}
