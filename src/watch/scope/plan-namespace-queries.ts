/**
 * Turns a {@link NamespaceScope} into the queries a watcher makes, for a namespaced resource:
 *
 * - one exact namespace: one namespaced list+watch, nothing filtered client-side;
 * - several exact namespaces (minus any excluded): one list+watch per namespace. Trade-off: N connections, N lists and
 *   N resourceVersions to track, against one cluster-wide stream that carries (and makes us decode)
 *   every other namespace's objects too; and per-namespace queries work with namespace-scoped RBAC
 *   (a Role in each namespace), where a cluster-wide query needs a ClusterRole. With
 *   `maxNamespacedWatches`, more namespaces than that switch to one cluster-wide query instead;
 * - anything else (all, patterns, exclusions): one all-namespaces list+watch, filtered client-side.
 *   Exact exclusions are also pushed to the apiserver as `metadata.namespace!=name` field selector
 *   terms, unless the caller's field selector already constrains `metadata.namespace`, so excluded
 *   namespaces (typically the busy `kube-system`) are not even sent.
 */
import { FieldSelector, parseFieldSelector } from './field-selector.js';
import type { NamespaceScope } from './namespace-scope.js';

/** How to query the apiserver. `fieldSelector` is the normalised string, or undefined for none. */
export type NamespaceQueryPlan =
  | { mode: 'namespaced'; namespaces: readonly string[]; fieldSelector: string | undefined }
  | {
      mode: 'all-namespaces';
      fieldSelector: string | undefined;
      /** Keep an object only when its namespace passes; undefined when every namespace is wanted. */
      filter: ((namespace: string) => boolean) | undefined;
    };

export interface PlanOptions {
  /** The caller's own field selector, combined with any terms the plan adds. */
  fieldSelector?: FieldSelector | string | undefined;
  /** Above this many exact namespaces, use one all-namespaces query instead; default: no limit. */
  maxNamespacedWatches?: number;
}

const NAMESPACE_FIELD = 'metadata.namespace';

/**
 * Plan the queries for a scope.
 *
 * @example
 * planNamespaceQueries(parseNamespaceScope(['!kube-system']));
 * // => { mode: 'all-namespaces', fieldSelector: 'metadata.namespace!=kube-system', filter: [Function] }
 */
export function planNamespaceQueries(scope: NamespaceScope, options: PlanOptions = {}): NamespaceQueryPlan {
  const given =
    typeof options.fieldSelector === 'string'
      ? parseFieldSelector(options.fieldSelector)
      : (options.fieldSelector ?? new FieldSelector([]));
  if (scope.patterns.length === 0 && scope.names.length > 0) {
    // Only exact names: exclusions just remove names from the list (parsing ensured one is left).
    const namespaces = scope.names.filter((name) => scope.matches(name));
    if (namespaces.length === 1 || namespaces.length <= (options.maxNamespacedWatches ?? Infinity)) {
      return { mode: 'namespaced', namespaces, fieldSelector: orUndefined(given) };
    }
  }
  let selector = given;
  if (scope.excludedNames.length > 0 && !given.constrains(NAMESPACE_FIELD)) {
    selector = given.with(
      scope.excludedNames.map((value) => ({ field: NAMESPACE_FIELD, operator: '!=' as const, value })),
    );
  }
  const filter = scope.isAll ? undefined : (namespace: string) => scope.matches(namespace);
  return { mode: 'all-namespaces', fieldSelector: orUndefined(selector), filter };
}

function orUndefined(selector: FieldSelector): string | undefined {
  return selector.isEmpty ? undefined : selector.toString();
}
