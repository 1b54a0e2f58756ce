/**
 * Pod → a Neutron port on its namespace's subnet: device_owner `raven:pod`, device_id the pod's
 * uid, tags, and its security groups — the namespace's and the cluster's egress group, or the
 * groups of the NetworkPolicies selecting it in place of the directions they isolate — put back
 * on every pass if changed. It has an address on each of the namespace's subnets (one per family).
 * With port pools on, a new pod takes a pre-created port of its namespace (`port-pool.ts`) and
 * only when none is free is its port created. The port's id, MAC and IPs are recorded on the pod in
 * the annotation `raven.openstack.org/port`, where a CNI plugin can read them; the annotation is
 * written with the resourceVersion it was decided on, so it never overwrites a newer pod.
 * Ports of a pod that is gone (or was re-created under the same name) are deleted, and so are
 * all but one of the ports that claim a pod (the one its annotation records is kept).
 */
import type { KubeObject } from '../client/kube-object.js';
import type { DeepReadonly } from '../cache/deep-freeze.js';
import { toObjectKey } from '../client/object-key.js';
import { isInvalid, isNotFound } from '../errors/classify.js';
import type { Port, PortCreate } from '../openstack/neutron-types.js';
import { done, requeueAfter, type HandlerResult } from '../queue/handler-result.js';
import { ensureOwned, type Collection } from './adopt.js';
import { asShape, type TranslatorContext } from './context.js';
import { clusterTag, identityOf, ownerTag, roleTag, uidTag } from './identity.js';
import { forgetNamespaceNetwork, namespaceNetwork } from './namespace-translator.js';
import { PORT_ANNOTATION, portAnnotation } from './port-annotation.js';
import { podGroups } from './policy-translator.js';

const KIND = 'Pod';
export { PORT_ANNOTATION, podPortAddress } from './port-annotation.js';
export const DEVICE_OWNER = 'raven:pod';

interface PodShape extends KubeObject {
  spec?: { hostNetwork?: boolean };
  status?: { phase?: string };
}

/** Whether a pod gets a port: not being deleted, not on the host's network, not finished. */
export function wantsPort(pod: DeepReadonly<PodShape> | undefined): pod is DeepReadonly<PodShape> {
  if (pod === undefined || pod.metadata?.deletionTimestamp !== undefined) return false;
  if (pod.spec?.hostNetwork === true) return false;
  return pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';
}

export async function reconcilePod(key: string, ctx: TranslatorContext): Promise<HandlerResult | undefined> {
  const pod = asShape<PodShape>(ctx.pods.get(toObjectKey(key)));
  const uid = wantsPort(pod) ? pod.metadata?.uid : undefined;
  const c = ctx.settings.clusterId;
  // One list for every port of this name: this pod's, and stale ones of another (earlier) pod.
  const ports = await ctx.os.neutron.ports.list({
    tags: [clusterTag(c), roleTag('pod-port'), ownerTag(key)],
  });
  const mine = ports.filter((p) => uid !== undefined && p.tags?.includes(uidTag(uid)) === true);
  for (const port of ports) if (!mine.includes(port)) await ctx.os.neutron.ports.delete(port.id);
  if (uid === undefined || pod === undefined) {
    ctx.status.forget(KIND, key);
    return done();
  }
  const namespace = pod.metadata?.namespace ?? '';
  const net = await namespaceNetwork(ctx, namespace);
  if (net === undefined) {
    ctx.status.pending(KIND, key, `waiting for namespace ${namespace}'s network`);
    return requeueAfter(1_000);
  }
  const identity = identityOf(c, 'pod-port', { kind: KIND, namespace, name: pod.metadata?.name ?? '', uid });
  const groups = await podGroups(ctx, pod, net.securityGroupId);
  if (groups === undefined) {
    ctx.status.pending(KIND, key, 'waiting for the security group of a NetworkPolicy selecting it');
    return requeueAfter(1_000);
  }
  // What the port says of its pod, and its groups, are owned: put back on every pass, not only at
  // create (a port taken from a pool is given them by its take).
  const owned = {
    name: identity.name,
    description: identity.description,
    device_owner: DEVICE_OWNER,
    device_id: uid,
    security_groups: groups,
  };
  // The port the pod records (when more than one claims the pod, made behind Raven's back or by a
  // crash, it is the one kept; the others are deleted below), else a pool port whose take was cut
  // short: its tags are this pod's, its description the pool's.
  const recorded = pod.metadata?.annotations?.[PORT_ANNOTATION] ?? '';
  let port: Port | undefined =
    mine.find((p) => recorded.includes(p.id)) ?? mine.find((p) => p.description !== identity.description);
  if (port === undefined && mine.length === 0)
    port = await ctx.portPools.take(ctx, namespace, net, identity.tags, owned);
  try {
    port ??= (
      await ensureOwned<Port, PortCreate>(
        portsOf(ctx),
        identity,
        {
          network_id: net.networkId,
          fixed_ips: net.subnets.map((s) => ({ subnet_id: s.id })),
          device_owner: DEVICE_OWNER,
          device_id: uid,
          security_groups: groups,
        },
        {},
        true,
        mine,
      )
    ).resource;
  } catch (error) {
    // The remembered network, subnet or group may be gone (removed behind our back): look again.
    if (isNotFound(error) || isInvalid(error)) forgetNamespaceNetwork(ctx, namespace);
    throw error;
  }
  const kept = port.id;
  for (const extra of mine) if (extra.id !== kept) await ctx.os.neutron.ports.delete(extra.id);
  if (
    port.name !== owned.name ||
    port.description !== owned.description ||
    port.device_owner !== owned.device_owner ||
    port.device_id !== owned.device_id ||
    !sameMembers(port.security_groups ?? [], groups)
  )
    port = await ctx.os.neutron.ports.update(port.id, owned);
  const annotation = portAnnotation(port, net.subnets);
  if (pod.metadata?.annotations?.[PORT_ANNOTATION] !== annotation) {
    await ctx.patch('Pod', namespace, pod.metadata?.name ?? '', {
      metadata: {
        resourceVersion: pod.metadata?.resourceVersion,
        annotations: { [PORT_ANNOTATION]: annotation },
      },
    });
  }
  ctx.status.managed(KIND, key);
  return done();
}

/** The ports collection, its creates batched into bulk calls when that is possible. */
function portsOf(ctx: TranslatorContext): Collection<Port, PortCreate> {
  const batcher = ctx.portBatcher;
  if (batcher === undefined) return ctx.os.neutron.ports;
  return {
    list: (filters) => ctx.os.neutron.ports.list(filters),
    create: (input) => batcher.create(input),
    tagsOnCreate: true,
  };
}

function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}
