/**
 * What discovery knows about a resource type: enough to build paths, pick verbs and resolve the
 * names users type (plural, singular, short names, kind).
 */

/** A subresource such as `status`, `scale` or `log`. */
export interface ApiSubresource {
  name: string;
  /** Kind of the subresource's body (`Scale` for deployments/scale); may be empty. */
  kind: string;
  verbs: string[];
}

export interface ApiResource {
  /** API group; `''` for the core group. */
  group: string;
  version: string;
  /** Plural resource name, as used in paths: `deployments`. */
  resource: string;
  /** Singular name: `deployment`. */
  singular: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  shortNames: string[];
  categories: string[];
  subresources: ApiSubresource[];
  /** True when `version` is the group's preferred version. */
  preferred: boolean;
}

/** A resolved name: the resource and, for `deployments/scale`, the subresource. */
export interface ResolvedResource extends ApiResource {
  subresource?: ApiSubresource;
}

/** `deployments.apps`, `pods` (core) — the qualified name used in messages. */
export function qualifiedName(r: Pick<ApiResource, 'resource' | 'group'>): string {
  return r.group === '' ? r.resource : `${r.resource}.${r.group}`;
}

/** `apps/v1` or `v1`. */
export function groupVersion(r: Pick<ApiResource, 'group' | 'version'>): string {
  return r.group === '' ? r.version : `${r.group}/${r.version}`;
}
