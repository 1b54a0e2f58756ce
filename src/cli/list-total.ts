/**
 * How many objects the initial list of `raven watch` will bring, for its progress line: the
 * apiserver's own estimate, from one list request of one item (`limit=1`), whose
 * `metadata.remainingItemCount` counts the rest. The streaming initial list (sendInitialEvents)
 * announces no total, so this small request is made first, and only when the progress line is
 * drawn (stderr is a terminal).
 *
 * An estimate: objects created or deleted while the list runs are not in it. No estimate
 * (undefined) when the server gives none: a label or field selector (the apiserver counts only
 * unfiltered lists), namespace patterns (several queries that may overlap), or a failed request
 * (the watch itself reports failures; a progress line never does).
 */
import type { ApiResource } from '../client/api-resource.js';
import { ResourceClient, type ResourceRequester } from '../client/resource-client.js';

export interface ListTotalScope {
  /** Exact namespaces (ignored for a cluster-scoped resource); undefined: all namespaces. */
  namespaces: readonly string[] | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  signal: AbortSignal;
}

async function countOne(
  resources: ResourceClient,
  namespace: string | undefined,
  signal: AbortSignal,
): Promise<number | undefined> {
  const page = await resources.list({ limit: 1, signal, ...(namespace === undefined ? {} : { namespace }) });
  const more = page.metadata?.continue !== undefined && page.metadata.continue !== '';
  if (!more) return page.items.length;
  const remaining = page.metadata?.remainingItemCount;
  return remaining === undefined ? undefined : page.items.length + remaining;
}

/** The estimated number of objects in the list, or undefined when the server cannot tell. */
export async function estimateListTotal(
  client: ResourceRequester,
  resource: ApiResource,
  scope: ListTotalScope,
): Promise<number | undefined> {
  if (scope.labelSelector !== undefined || scope.fieldSelector !== undefined) return undefined;
  if (scope.namespaces?.some((n) => /[*?!]/.test(n)) === true) return undefined;
  const resources = new ResourceClient(client, resource);
  const queries = resource.namespaced && scope.namespaces !== undefined ? scope.namespaces : [undefined];
  try {
    const counts = await Promise.all(
      queries.map((namespace) => countOne(resources, namespace, scope.signal)),
    );
    return counts.some((c) => c === undefined)
      ? undefined
      : counts.reduce<number>((sum, c) => sum + (c ?? 0), 0);
  } catch {
    return undefined;
  }
}
