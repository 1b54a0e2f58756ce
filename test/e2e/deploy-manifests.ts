/**
 * Kubernetes manifests as the deployment tests handle them: where each kind lives in the API, and
 * how a manifest is moved into a test namespace so tests never meet.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** Collection paths of the kinds deploy/ and the chart use. */
export const collections: Record<string, { prefix: string; plural: string; namespaced: boolean }> = {
  Namespace: { prefix: '/api/v1', plural: 'namespaces', namespaced: false },
  ServiceAccount: { prefix: '/api/v1', plural: 'serviceaccounts', namespaced: true },
  ConfigMap: { prefix: '/api/v1', plural: 'configmaps', namespaced: true },
  Secret: { prefix: '/api/v1', plural: 'secrets', namespaced: true },
  Service: { prefix: '/api/v1', plural: 'services', namespaced: true },
  PersistentVolumeClaim: { prefix: '/api/v1', plural: 'persistentvolumeclaims', namespaced: true },
  Deployment: { prefix: '/apis/apps/v1', plural: 'deployments', namespaced: true },
  PodDisruptionBudget: { prefix: '/apis/policy/v1', plural: 'poddisruptionbudgets', namespaced: true },
  ClusterRole: { prefix: '/apis/rbac.authorization.k8s.io/v1', plural: 'clusterroles', namespaced: false },
  ClusterRoleBinding: {
    prefix: '/apis/rbac.authorization.k8s.io/v1',
    plural: 'clusterrolebindings',
    namespaced: false,
  },
  Role: { prefix: '/apis/rbac.authorization.k8s.io/v1', plural: 'roles', namespaced: true },
  RoleBinding: { prefix: '/apis/rbac.authorization.k8s.io/v1', plural: 'rolebindings', namespaced: true },
};

export function collectionPath(m: Manifest): string {
  const c = collections[m.kind];
  assert.ok(c, `a kind the test knows: ${m.kind}`);
  return c.namespaced
    ? `${c.prefix}/namespaces/${m.metadata.namespace ?? ''}/${c.plural}`
    : `${c.prefix}/${c.plural}`;
}

/**
 * The manifest moved into a test namespace with unique cluster-scoped names: namespaced objects go
 * to `ns`, cluster-scoped ones are named `raven-<ns>`, references follow.
 */
export function relocate(m: Manifest, ns: string): Manifest {
  const copy = structuredClone(m);
  const c = collections[copy.kind];
  if (c?.namespaced === true) copy.metadata.namespace = ns;
  else if (copy.kind === 'Namespace') copy.metadata.name = `raven-dry-${randomBytes(3).toString('hex')}`;
  else copy.metadata.name = `raven-${ns}`;
  const binding = copy as { roleRef?: { kind: string; name: string }; subjects?: { namespace?: string }[] };
  if (binding.roleRef?.kind === 'ClusterRole') binding.roleRef.name = `raven-${ns}`;
  for (const subject of binding.subjects ?? []) subject.namespace = ns;
  return copy;
}

export const byKind = (all: Manifest[], kind: string): Manifest[] => all.filter((m) => m.kind === kind);
