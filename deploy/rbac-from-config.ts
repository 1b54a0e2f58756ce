/**
 * The least-privilege RBAC for a raven.yaml: a ClusterRole with get, list and watch on exactly the
 * resources its watchers watch, and, with leader election, a Role for its Lease (create; get and
 * update on that one name), or, sharded, a Role for the group's Leases (create, get, list,
 * update, delete: each member's Lease name is made from its identity, and members delete the
 * Leases of members long gone). Resource names are resolved by discovery against the cluster of the
 * current kubeconfig, as `raven run` would (`deploy`, `deployments`, `apps/v1/deployments` are all
 * `deployments` in group `apps`), so a short name or a CRD's plural gives the right rule.
 *
 *   npx tsx deploy/rbac-from-config.ts deploy/raven.yaml [--kubeconfig FILE] [--context NAME] [--name raven]
 *
 * Prints the ClusterRole (and Role) as YAML. The bindings are in deploy/rbac.yaml.
 */
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parse, stringify } from 'yaml';
import { Discovery } from '../src/client/discovery.js';
import { KubeClient } from '../src/client/kube-client.js';
import { loadConfig } from '../src/client/load-config.js';

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

export interface WatchedResource {
  group: string;
  resource: string;
}

/** What the RBAC depends on, read from the config file as written. */
export interface RbacInputs {
  /** Each watcher's `resource`, as written. */
  resources: string[];
  leaderElection: { enabled: boolean; namespace: string; name: string } | undefined;
  sharding: { namespace: string } | undefined;
}

/** Read the parts of a raven.yaml that RBAC depends on (defaults as in docs/configuration.md). */
export function rbacInputs(text: string): RbacInputs {
  const config = parse(text) as {
    watchers?: { resource?: unknown }[];
    leaderElection?: { enabled?: unknown; namespace?: unknown; name?: unknown };
    sharding?: { enabled?: unknown; namespace?: unknown };
  } | null;
  const sharding = config?.sharding;
  const resources = (config?.watchers ?? []).map((w) => String(w.resource));
  const le = config?.leaderElection;
  return {
    resources,
    leaderElection:
      le?.enabled === true
        ? {
            enabled: true,
            namespace: typeof le.namespace === 'string' ? le.namespace : 'raven',
            name: typeof le.name === 'string' ? le.name : 'raven',
          }
        : undefined,
    sharding:
      sharding?.enabled === true
        ? { namespace: typeof sharding.namespace === 'string' ? sharding.namespace : 'raven' }
        : undefined,
  };
}

/** One read-only rule per API group, groups and resources sorted, duplicates merged. */
export function readRules(watched: readonly WatchedResource[]): PolicyRule[] {
  const byGroup = new Map<string, Set<string>>();
  for (const { group, resource } of watched)
    byGroup.set(group, (byGroup.get(group) ?? new Set()).add(resource));
  return [...byGroup.keys()].sort().map((group) => ({
    apiGroups: [group],
    resources: [...(byGroup.get(group) ?? [])].sort(),
    verbs: ['get', 'list', 'watch'],
  }));
}

/** Leader election's needs: create a Lease (no name is known before it exists), get and update its own. */
export function leaseRules(leaseName: string): PolicyRule[] {
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      resourceNames: [leaseName],
      verbs: ['get', 'update'],
    },
  ];
}

/**
 * A sharded replica's needs: the Leases of its group, whose names it knows only once they exist
 * (each member's is named after a hash of its identity), so the rules cannot name them.
 */
export function leaseGroupRules(): PolicyRule[] {
  return [
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      verbs: ['create', 'get', 'list', 'update', 'delete'],
    },
  ];
}

/** The manifests for a config: the ClusterRole and, with leader election, the Role. */
export async function rbacFromConfig(
  text: string,
  resolve: (resource: string) => Promise<WatchedResource>,
  options: { name?: string } = {},
): Promise<object[]> {
  const name = options.name ?? 'raven';
  const inputs = rbacInputs(text);
  const watched = await Promise.all(inputs.resources.map(resolve));
  const labels = { 'app.kubernetes.io/name': name };
  const out: object[] = [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name, labels },
      rules: readRules(watched),
    },
  ];
  if (inputs.leaderElection !== undefined) {
    out.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: `${name}-leader-election`, namespace: inputs.leaderElection.namespace, labels },
      rules: leaseRules(inputs.leaderElection.name),
    });
  }
  if (inputs.sharding !== undefined) {
    out.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: `${name}-sharding`, namespace: inputs.sharding.namespace, labels },
      rules: leaseGroupRules(),
    });
  }
  return out;
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { kubeconfig: { type: 'string' }, context: { type: 'string' }, name: { type: 'string' } },
  });
  const [file] = positionals;
  if (file === undefined)
    throw new Error('usage: rbac-from-config.ts raven.yaml [--kubeconfig FILE] [--name raven]');
  const client = new KubeClient(
    await loadConfig({
      ...(values.kubeconfig === undefined ? {} : { kubeconfig: values.kubeconfig }),
      ...(values.context === undefined ? {} : { context: values.context }),
    }),
  );
  try {
    const discovery = new Discovery(client);
    const manifests = await rbacFromConfig(
      await readFile(file, 'utf8'),
      async (resource) => {
        const resolved = await discovery.resolve(resource);
        return { group: resolved.group, resource: resolved.resource };
      },
      values.name === undefined ? {} : { name: values.name },
    );
    process.stdout.write(manifests.map((m) => stringify(m)).join('---\n'));
  } finally {
    await client.destroy();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`rbac-from-config: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
