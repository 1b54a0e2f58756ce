/**
 * NetworkPolicy → a security group per policy, holding the rules the policy implies
 * ({@link policyRules}); the rules are made equal to that set on every pass, recomputed whenever
 * the policy, a pod or a namespace it concerns changes. The ports of the pods a policy selects
 * carry its group ({@link podGroups}); a pod selected by any policy loses its namespace's default
 * for each direction a selecting policy isolates (default deny). A policy that is gone (or
 * re-created with a new uid) has its group deleted once no port carries it any more.
 */
import type { DeepReadonly } from '../cache/deep-freeze.js';
import { toObjectKey } from '../client/object-key.js';
import type { KubeObject } from '../client/kube-object.js';
import { isConflict } from '../errors/classify.js';
import type { SecurityGroup, SecurityGroupCreate } from '../openstack/neutron-types.js';
import { done, requeueAfter, type HandlerResult } from '../queue/handler-result.js';
import { ensureOwned, findOwned } from './adopt.js';
import { asShape, type TranslatorContext } from './context.js';
import { clusterTag, identityOf, ownerTag, roleTag, uidTag, type Owner } from './identity.js';
import { namespaceNetwork } from './namespace-translator.js';
import { isolates, policyRules, selectsPod, type PolicyShape, type PolicyView } from './policy-rules.js';
import { syncRules } from './security-group-rules.js';

const KIND = 'NetworkPolicy';

function ownerOf(policy: DeepReadonly<KubeObject>): Owner {
  return {
    kind: KIND,
    namespace: policy.metadata?.namespace,
    name: policy.metadata?.name ?? '',
    uid: policy.metadata?.uid ?? '',
  };
}

/** The rules' view of the cluster: the caches, and the namespace subnets the translator knows. */
export function viewOf(ctx: TranslatorContext): PolicyView {
  return {
    namespaces: () => ctx.namespaces.list(),
    podsIn: (namespace) => ctx.pods.byIndex('namespace', namespace),
    subnetCidrs: (namespace) => {
      const known = ctx.namespaceNetworks.get(namespace);
      const ns = ctx.namespaces.get(toObjectKey(namespace));
      return known !== undefined && known.uid === ns?.metadata?.uid
        ? known.network.subnets.map((s) => s.cidr)
        : undefined;
    },
    podCidrs: ctx.settings.podCidrs,
  };
}

export async function reconcilePolicy(
  key: string,
  ctx: TranslatorContext,
): Promise<HandlerResult | undefined> {
  const policy = asShape<PolicyShape>(ctx.networkPolicies.get(toObjectKey(key)));
  const uid = policy?.metadata?.deletionTimestamp === undefined ? policy?.metadata?.uid : undefined;
  const c = ctx.settings.clusterId;
  const neutron = ctx.os.neutron;
  // One list for every group of this name: this policy's, and stale ones (gone, or an earlier uid).
  const groups = await neutron.securityGroups.list({
    tags: [clusterTag(c), roleTag('np-sg'), ownerTag(key)],
  });
  const mine = groups.filter((g) => uid !== undefined && g.tags?.includes(uidTag(uid)) === true);
  let inUse = 0;
  for (const group of groups) {
    if (mine.includes(group)) continue;
    try {
      await neutron.securityGroups.delete(group.id);
    } catch (error) {
      // Ports still carry it: their pods' passes take it off, then it can go.
      if (!isConflict(error)) throw error;
      inUse++;
    }
  }
  if (uid === undefined || policy === undefined) {
    ctx.policyGroups.delete(key);
    if (inUse > 0) {
      ctx.status.pending(KIND, key, `waiting for ${inUse} ports to drop the policy's group`);
      return requeueAfter(2_000);
    }
    ctx.status.forget(KIND, key);
    return done();
  }
  let { rules, waitingFor } = policyRules(policy, viewOf(ctx));
  if (waitingFor.length > 0) {
    // Subnets of namespaces not reconciled since the start are looked up (then remembered).
    for (const name of waitingFor) await namespaceNetwork(ctx, name);
    ({ rules, waitingFor } = policyRules(policy, viewOf(ctx)));
  }
  const group = await ensureOwned<SecurityGroup, SecurityGroupCreate>(
    neutron.securityGroups,
    identityOf(c, 'np-sg', ownerOf(policy)),
    {},
    {},
    true,
    mine,
  );
  await syncRules(neutron.securityGroupRules, group.resource.id, rules, group.resource.security_group_rules);
  ctx.policyGroups.set(key, { uid, id: group.resource.id });
  if (waitingFor.length > 0) {
    ctx.status.pending(KIND, key, `waiting for the networks of namespaces ${waitingFor.join(', ')}`);
    return requeueAfter(1_000);
  }
  ctx.status.managed(KIND, key);
  return done();
}

/**
 * The security groups a pod's port must carry: the groups of the policies selecting it, its
 * namespace's group unless a selecting policy isolates ingress, and the cluster's egress group
 * unless one isolates egress. Undefined while a selecting policy's group is not made yet (the pod
 * waits rather than be left open).
 */
export async function podGroups(
  ctx: TranslatorContext,
  pod: DeepReadonly<KubeObject>,
  namespaceGroupId: string,
): Promise<string[] | undefined> {
  const plan = podGroupPlan(ctx, pod);
  const groups: string[] = [];
  for (const policy of plan.policies) {
    const id = await policyGroupId(ctx, policy);
    if (id === undefined) return undefined;
    groups.push(id);
  }
  if (plan.namespaceGroup) groups.push(namespaceGroupId);
  if (plan.egressGroup) groups.push(ctx.infra.egressGroupId);
  return groups;
}

/**
 * Which groups a pod's port carries, by what they are for (the ids are looked up by the caller):
 * the policies selecting it, and whether its namespace's group and the egress group stay.
 */
export function podGroupPlan(
  ctx: Pick<TranslatorContext, 'networkPolicies'>,
  pod: DeepReadonly<KubeObject>,
): { policies: DeepReadonly<PolicyShape>[]; namespaceGroup: boolean; egressGroup: boolean } {
  const policies = ctx.networkPolicies
    .byIndex('namespace', pod.metadata?.namespace ?? '')
    .map((p) => asShape<PolicyShape>(p))
    .filter(
      (p): p is DeepReadonly<PolicyShape> => p !== undefined && p.metadata?.deletionTimestamp === undefined,
    )
    .filter((p) => selectsPod(p, pod));
  const isolated = policies.map(isolates);
  return {
    policies,
    namespaceGroup: !isolated.some((d) => d.ingress),
    egressGroup: !isolated.some((d) => d.egress),
  };
}

async function policyGroupId(
  ctx: TranslatorContext,
  policy: DeepReadonly<PolicyShape>,
): Promise<string | undefined> {
  const key = `${policy.metadata?.namespace ?? ''}/${policy.metadata?.name ?? ''}`;
  const owner = ownerOf(policy);
  const known = ctx.policyGroups.get(key);
  if (known?.uid === owner.uid) return known.id;
  const [group] = await findOwned<SecurityGroup>(
    ctx.os.neutron.securityGroups,
    identityOf(ctx.settings.clusterId, 'np-sg', owner),
  );
  if (group === undefined) return undefined;
  ctx.policyGroups.set(key, { uid: owner.uid, id: group.id });
  return group.id;
}
