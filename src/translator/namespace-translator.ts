/**
 * Namespace → a network, a subnet allocated from the pod subnet pool and attached to the router,
 * and a security group, the namespace's default ingress (its own subnet and the service subnet
 * may reach its pods), whose rules are made equal to that on every pass. (Egress anywhere is the
 * cluster's egress group, kept apart so that a NetworkPolicy can isolate either direction alone.)
 * A namespace that is gone or terminating is taken apart in dependency order once its pods' ports
 * are gone: router interface, subnet, network, security group.
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
import { identityOf, ownerTag, clusterTag, roleTag, type Owner } from './identity.js';
import { ensureRouterInterface, removeRouterInterface } from './infrastructure.js';
import { syncRules, type RuleSpec } from './security-group-rules.js';

const KIND = 'Namespace';

export interface NamespaceNetwork {
  networkId: string;
  subnetId: string;
  /** The subnet's CIDR: what a NetworkPolicy peer naming every pod of the namespace becomes. */
  subnetCidr: string;
  securityGroupId: string;
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
  const [subnet] = await findOwned<Subnet>(ctx.os.neutron.subnets, identityOf(c, 'ns-subnet', owner));
  const [group] = await findOwned<SecurityGroup>(
    ctx.os.neutron.securityGroups,
    identityOf(c, 'ns-sg', owner),
  );
  if (network === undefined || subnet === undefined || group === undefined) return undefined;
  const found = {
    networkId: network.id,
    subnetId: subnet.id,
    subnetCidr: subnet.cidr,
    securityGroupId: group.id,
  };
  ctx.namespaceNetworks.set(name, { uid: owner.uid, network: found });
  return found;
}

/** Look the network of namespace `name` up again next time (a call found it gone). */
export function forgetNamespaceNetwork(ctx: TranslatorContext, name: string): void {
  ctx.namespaceNetworks.delete(name);
}

/**
 * A namespace group's rules: its own subnet (its pods) and the service subnet (load balancers)
 * reach its pods. Addresses rather than a remote group, so that a pod whose port drops the group
 * (a NetworkPolicy isolates its ingress) still reaches the other pods of its namespace.
 */
export function namespaceRules(subnetCidr: string, serviceCidr: string): RuleSpec[] {
  return [
    { direction: 'ingress', ethertype: 'IPv4', remote_ip_prefix: subnetCidr },
    { direction: 'ingress', ethertype: 'IPv4', remote_ip_prefix: serviceCidr },
  ];
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
  const network = await ensureOwned<Network, NetworkCreate>(
    neutron.networks,
    identityOf(c, 'ns-net', owner),
    {},
  );
  const subnet = await ensureOwned<Subnet, SubnetCreate>(neutron.subnets, identityOf(c, 'ns-subnet', owner), {
    network_id: network.resource.id,
    ip_version: 4,
    subnetpool_id: ctx.infra.subnetPoolId,
    prefixlen: ctx.settings.podPrefixLength,
    enable_dhcp: false,
  });
  const group = await ensureOwned<SecurityGroup, SecurityGroupCreate>(
    neutron.securityGroups,
    identityOf(c, 'ns-sg', owner),
    {},
  );
  // Every pass, not only the one that created the group: a rule lost to a timeout or a crash
  // between the group and its rules is put back.
  await syncRules(
    neutron.securityGroupRules,
    group.resource.id,
    namespaceRules(subnet.resource.cidr, ctx.settings.serviceCidr),
    group.resource.security_group_rules,
  );
  await ensureRouterInterface(ctx.os, ctx.infra.routerId, subnet.resource.id);
  ctx.namespaceNetworks.set(key, {
    uid: owner.uid,
    network: {
      networkId: network.resource.id,
      subnetId: subnet.resource.id,
      subnetCidr: subnet.resource.cidr,
      securityGroupId: group.resource.id,
    },
  });
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
  for (const subnet of await neutron.subnets.list(byOwner('ns-subnet'))) {
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
