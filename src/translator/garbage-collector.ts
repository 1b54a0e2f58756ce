/**
 * Garbage collection: everything this cluster's translator made (its description says so, tagged
 * or not) whose Kubernetes object no longer exists — deleted while the translator was down, or a
 * crash between two calls — is handed to the reconcile of that object's key, which removes it in
 * dependency order. Run at start (once the caches are synced) and periodically; the drift check
 * (`resync.ts`) runs the same search on its own listing.
 */
import { toObjectKey } from '../client/object-key.js';
import type { TranslatorContext } from './context.js';
import { parseDescription, type OwnerKind } from './identity.js';

export type Enqueue = (kind: Exclude<OwnerKind, 'Cluster'>, key: string) => void;

/** Anything with a description that may name its owner. */
export type Described = { description?: string | undefined };

/** Returns how many objects were found orphaned. */
export async function collectGarbage(ctx: TranslatorContext, enqueue: Enqueue): Promise<number> {
  const neutron = ctx.os.neutron;
  const octavia = ctx.os.octavia;
  const described: Described[] = [
    ...(await neutron.ports.list()),
    ...(await neutron.networks.list()),
    ...(await neutron.subnets.list()),
    ...(await neutron.securityGroups.list()),
    ...(await neutron.floatingIps.list()),
    ...(await octavia.loadBalancers.list()),
  ];
  return enqueueOrphans(ctx, described, enqueue);
}

/**
 * Hand each Kubernetes object that `described` names but the caches no longer hold (with that
 * uid) to `enqueue`, once; returns how many.
 */
export function enqueueOrphans(
  ctx: Pick<
    TranslatorContext,
    'settings' | 'namespaces' | 'pods' | 'services' | 'networkPolicies' | 'logger'
  >,
  described: Iterable<Described>,
  enqueue: Enqueue,
): number {
  const c = ctx.settings.clusterId;
  const orphans = new Set<string>();
  for (const resource of described) {
    const owner = parseDescription(c, resource.description);
    if (owner === undefined || owner.kind === 'Cluster') continue;
    const store =
      owner.kind === 'Namespace'
        ? ctx.namespaces
        : owner.kind === 'Pod'
          ? ctx.pods
          : owner.kind === 'NetworkPolicy'
            ? ctx.networkPolicies
            : ctx.services;
    const current = store.get(toObjectKey(owner.key));
    if (current?.metadata?.uid === owner.uid) continue;
    const id = `${owner.kind}/${owner.key}`;
    if (orphans.has(id)) continue;
    orphans.add(id);
    enqueue(owner.kind, owner.key);
  }
  if (orphans.size > 0)
    ctx.logger.info(
      { orphans: [...orphans] },
      'garbage found: removing what was made for objects that are gone',
    );
  return orphans.size;
}
