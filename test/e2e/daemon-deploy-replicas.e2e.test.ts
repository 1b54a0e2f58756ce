/**
 * Deploying N replicas: the Helm chart (deploy/helm/raven) and the kustomize overlay
 * (deploy-replicas/). helm and kustomize are the real tools, built from the Go module proxy
 * (hack/deploytools). There is no kubelet here, so pods never run; what the apiserver can judge is
 * judged by it: every rendered object is created by server-side apply with strict field
 * validation and read back, the RBAC is asked of the apiserver's own authorizer
 * (SubjectAccessReview), and the rendered raven.yaml is checked by `raven check`.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { sharedCluster, freshNamespace, deleteNamespace } from '../harness/test-cluster.js';
import { chart, documents, helm, kustomize, rendered, repo, scratch, template } from './helm-chart.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { ok, runRaven } from './daemon-process.js';
import { byKind, collectionPath, collections, relocate, type Manifest } from './deploy-manifests.js';
import type { PolicyRule } from '../../deploy/rbac-from-config.js';

const deploy = join(repo, 'deploy');

/** Create (or update) by server-side apply, strict: an unknown or misspelt field fails. */
async function apply(t: TestContext, plane: ControlPlane, objects: Manifest[]): Promise<void> {
  for (const m of objects) {
    const path = `${collectionPath(m)}/${m.metadata.name}`;
    const { status, body } = await plane.adminRequest(
      'PATCH',
      `${path}?fieldManager=raven-test&fieldValidation=Strict`,
      m,
      'application/apply-patch+yaml',
    );
    assert.ok(status === 200 || status === 201, `${m.kind} ${m.metadata.name}: ${status} ${body}`);
    if (collections[m.kind]?.namespaced === false) t.after(() => plane.adminRequest('DELETE', path));
  }
}

async function readBack<T>(plane: ControlPlane, m: Manifest | undefined): Promise<T> {
  assert.ok(m, 'the object was rendered');
  return ok<T>(plane.adminRequest('GET', `${collectionPath(m)}/${m.metadata.name}`));
}

/** The apiserver's own answer: may this ServiceAccount do this? */
async function allowed(
  plane: ControlPlane,
  serviceAccount: { namespace: string; name: string },
  attributes: { verb: string; group: string; resource: string; namespace?: string; name?: string },
): Promise<boolean> {
  const review = await ok<{ status: { allowed: boolean } }>(
    plane.adminRequest('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: `system:serviceaccount:${serviceAccount.namespace}:${serviceAccount.name}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${serviceAccount.namespace}`],
        resourceAttributes: attributes,
      },
    }),
  );
  return review.status.allowed;
}

/** `raven check` on a rendered raven.yaml against the cluster, with the variables it reads set. */
async function ravenCheck(dir: string, text: string): Promise<void> {
  const file = join(dir, `raven-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, text);
  const check = await runRaven(['check', '-c', file], {
    kubeconfig: (await sharedCluster()).kubeconfig,
    env: {
      RAVEN_CHECKPOINT_URL: 'postgres://raven:not-a-password@127.0.0.1:5432/raven',
      WEBHOOK_URL: 'https://audit.example.com/raven',
      WEBHOOK_SECRET: 'not-a-real-secret',
      SLACK_WEBHOOK_URL: 'https://hooks.example.com/chat',
    },
  });
  assert.equal(check.code, 0, check.stderr);
}

interface Container {
  env?: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  envFrom?: { secretRef: { name: string } }[];
}
interface DeploymentShape {
  spec: {
    replicas: number;
    strategy: { type: string };
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        serviceAccountName: string;
        containers: Container[];
        volumes: { name: string; persistentVolumeClaim?: { claimName: string }; emptyDir?: object }[];
      };
    };
  };
}
interface PdbShape {
  spec: {
    maxUnavailable?: number | string;
    minAvailable?: number | string;
    selector: { matchLabels: object };
  };
}
interface RavenYaml {
  checkpoint: { type: string; url?: string; path?: string };
  leaderElection: { enabled: boolean; namespace: string; name: string };
  sharding?: { enabled: boolean; namespace: string; group: string; field: string; buckets: number };
  server: { address: string; port: number };
}

const secretRef = (c: Container | undefined, name: string): unknown =>
  c?.env?.find((e) => e.name === name)?.valueFrom?.secretKeyRef;

const ravenYaml = (objects: Manifest[]): string =>
  (byKind(objects, 'ConfigMap')[0] as { data?: Record<string, string> } | undefined)?.data?.['raven.yaml'] ??
  '';

const postgresValues = {
  replicaCount: 3,
  checkpoint: { type: 'postgres', postgres: { existingSecret: 'raven-postgres', secretKey: 'uri' } },
  redactionKey: { existingSecret: 'raven-redaction' },
  envFromSecret: 'raven-secrets',
};

test('helm lint passes for one replica with SQLite and for three with PostgreSQL', async (t) => {
  const dir = await scratch(t);
  const values = join(dir, 'postgres.yaml');
  await writeFile(values, stringify(postgresValues));
  for (const args of [[], ['-f', values]]) {
    const lint = await helm(dir, ['lint', '--strict', chart, ...args]);
    assert.equal(lint.code, 0, lint.stdout + lint.stderr);
    assert.match(lint.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  }
});

test('the chart with its defaults: one replica, SQLite on a volume, no Lease, applied to the apiserver', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const dir = await scratch(t);
  const objects = await rendered(dir, {}, ns);
  assert.deepEqual(
    objects.map((m) => m.kind).sort(),
    [
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      'Deployment',
      'PersistentVolumeClaim',
      'Service',
      'ServiceAccount',
    ],
    'no PodDisruptionBudget for one replica, no Lease Role without leader election',
  );
  const config = parse(ravenYaml(objects)) as RavenYaml;
  assert.deepEqual(config.checkpoint, { type: 'sqlite', path: '/var/lib/raven/raven-state.db' });
  assert.equal(config.leaderElection.enabled, false);
  await ravenCheck(dir, ravenYaml(objects));

  await apply(t, plane, objects);
  const deployment = await readBack<DeploymentShape>(plane, byKind(objects, 'Deployment')[0]);
  assert.equal(deployment.spec.replicas, 1);
  assert.equal(deployment.spec.strategy.type, 'Recreate');
  const claim = await readBack<{ spec: { resources: { requests: { storage: string } } } }>(
    plane,
    byKind(objects, 'PersistentVolumeClaim')[0],
  );
  assert.equal(claim.spec.resources.requests.storage, '1Gi');
  assert.deepEqual(
    deployment.spec.template.spec.volumes.find((v) => v.name === 'state')?.persistentVolumeClaim,
    { claimName: 'raven-state' },
  );
  assert.equal(secretRef(deployment.spec.template.spec.containers[0], 'RAVEN_REDACTION_KEY'), undefined);
});

test('the chart with 3 replicas and PostgreSQL: Lease RBAC, PodDisruptionBudget, Secrets as env, applied to the apiserver', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const dir = await scratch(t);
  const objects = await rendered(dir, postgresValues, ns);
  assert.deepEqual(byKind(objects, 'PersistentVolumeClaim'), [], 'nothing on a volume');
  const config = parse(ravenYaml(objects)) as RavenYaml;
  assert.equal(config.checkpoint.type, 'postgres');
  assert.equal(config.checkpoint.url, '${RAVEN_CHECKPOINT_URL}');
  assert.equal(config.leaderElection.enabled, true);
  assert.equal(config.leaderElection.namespace, ns);
  assert.equal(config.leaderElection.name, 'raven');
  await ravenCheck(dir, ravenYaml(objects));

  await apply(t, plane, objects);
  const deployment = await readBack<DeploymentShape>(plane, byKind(objects, 'Deployment')[0]);
  assert.equal(deployment.spec.replicas, 3);
  assert.equal(deployment.spec.strategy.type, 'RollingUpdate');
  const [container] = deployment.spec.template.spec.containers;
  assert.deepEqual(secretRef(container, 'RAVEN_CHECKPOINT_URL'), { name: 'raven-postgres', key: 'uri' });
  assert.deepEqual(secretRef(container, 'RAVEN_REDACTION_KEY'), { name: 'raven-redaction', key: 'key' });
  assert.deepEqual(container?.envFrom, [{ secretRef: { name: 'raven-secrets' } }]);
  assert.ok(deployment.spec.template.spec.volumes.every((v) => v.persistentVolumeClaim === undefined));

  const pdb = await readBack<PdbShape>(plane, byKind(objects, 'PodDisruptionBudget')[0]);
  assert.equal(pdb.spec.maxUnavailable, 1);
  assert.equal(pdb.spec.minAvailable, undefined);
  assert.deepEqual(pdb.spec.selector.matchLabels, deployment.spec.selector.matchLabels);
  for (const [key, value] of Object.entries(pdb.spec.selector.matchLabels))
    assert.equal(deployment.spec.template.metadata.labels[key], value, 'the budget selects the pods');

  const role = await readBack<{ rules: PolicyRule[] }>(
    plane,
    byKind(objects, 'Role').find((r) => r.metadata.name === 'raven-leader-election'),
  );
  assert.deepEqual(role.rules, [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      resourceNames: ['raven'],
      verbs: ['get', 'update'],
    },
  ]);
  // What the authorizer grants the pods' ServiceAccount, with the bindings as rendered.
  const sa = { namespace: ns, name: deployment.spec.template.spec.serviceAccountName };
  const lease = { group: 'coordination.k8s.io', resource: 'leases', namespace: ns };
  assert.equal(await allowed(plane, sa, { ...lease, verb: 'create' }), true);
  assert.equal(await allowed(plane, sa, { ...lease, verb: 'get', name: 'raven' }), true);
  assert.equal(await allowed(plane, sa, { ...lease, verb: 'update', name: 'raven' }), true);
  assert.equal(await allowed(plane, sa, { ...lease, verb: 'update', name: 'someone-else' }), false);
  assert.equal(await allowed(plane, sa, { ...lease, verb: 'delete', name: 'raven' }), false);
  assert.equal(await allowed(plane, sa, { verb: 'watch', group: 'apps', resource: 'deployments' }), true);
  assert.equal(await allowed(plane, sa, { verb: 'list', group: '', resource: 'secrets' }), false);
});

test('the chart with 3 sharded replicas: the sharding config, the group Lease RBAC, applied to the apiserver', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const dir = await scratch(t);
  const objects = await rendered(dir, { ...postgresValues, sharding: { enabled: true, buckets: 64 } }, ns);
  const config = parse(ravenYaml(objects)) as RavenYaml;
  assert.equal(config.leaderElection.enabled, false, 'sharded replicas are not leader-elected');
  assert.deepEqual(config.sharding, {
    enabled: true,
    namespace: ns,
    group: 'raven',
    field: 'uid',
    buckets: 64,
    leaseDurationSeconds: 15,
    renewDeadlineSeconds: 10,
    retryPeriodSeconds: 2,
  });
  await ravenCheck(dir, ravenYaml(objects));
  assert.deepEqual(
    byKind(objects, 'Role').map((r) => r.metadata.name),
    ['raven-sharding'],
    'no leader-election Role',
  );
  await apply(t, plane, objects);
  const deployment = await readBack<DeploymentShape>(plane, byKind(objects, 'Deployment')[0]);
  assert.equal(deployment.spec.replicas, 3);
  assert.ok(byKind(objects, 'PodDisruptionBudget')[0], 'a disruption budget for the replicas');
  // What a member of the group does with Leases (controller/lease-group.ts), as the authorizer sees it.
  const sa = { namespace: ns, name: deployment.spec.template.spec.serviceAccountName };
  const lease = { group: 'coordination.k8s.io', resource: 'leases', namespace: ns };
  for (const verb of ['create', 'list'])
    assert.equal(await allowed(plane, sa, { ...lease, verb }), true, verb);
  for (const verb of ['get', 'update', 'delete'])
    assert.equal(await allowed(plane, sa, { ...lease, verb, name: 'raven-0123456789abcdef' }), true, verb);
  assert.equal(await allowed(plane, sa, { ...lease, verb: 'list', namespace: 'kube-system' }), false);
});

test('the chart refuses values that cannot work, naming the value and what would be valid', async (t) => {
  const dir = await scratch(t);
  const cases: [string, object, RegExp][] = [
    [
      'SQLite with 3 replicas',
      { replicaCount: 3 },
      /checkpoint\.type: sqlite is a file on one pod's volume and works with replicaCount 1 only \(got replicaCount 3\); use checkpoint\.type: postgres/,
    ],
    [
      'PostgreSQL without its Secret',
      { checkpoint: { type: 'postgres' }, redactionKey: { existingSecret: 'k' } },
      /checkpoint\.postgres\.existingSecret: required with checkpoint\.type postgres/,
    ],
    [
      'PostgreSQL without a shared redaction key',
      { replicaCount: 2, checkpoint: { type: 'postgres', postgres: { existingSecret: 'pg' } } },
      /redactionKey\.existingSecret: required with checkpoint\.type postgres/,
    ],
    [
      'several replicas without leader election',
      { ...postgresValues, leaderElection: { enabled: false } },
      /leaderElection\.enabled: false with replicaCount 3 would run 3 active daemons/,
    ],
    [
      'sharding on SQLite',
      { sharding: { enabled: true } },
      /sharding\.enabled: the replicas share their checkpoint; use checkpoint\.type: postgres/,
    ],
    [
      'sharding and leader election',
      { ...postgresValues, sharding: { enabled: true }, leaderElection: { enabled: true } },
      /leaderElection\.enabled: true with sharding\.enabled: choose one/,
    ],
    [
      'an unknown checkpoint type',
      { checkpoint: { type: 'memory' } },
      /checkpoint\.type: "memory" is not valid; use sqlite \(one replica\) or postgres \(any number\)/,
    ],
    [
      'both disruption budget forms',
      { ...postgresValues, podDisruptionBudget: { minAvailable: 2, maxUnavailable: 1 } },
      /podDisruptionBudget: set minAvailable or maxUnavailable, not both/,
    ],
    [
      'the checkpoint written into config',
      { config: { checkpoint: { path: '/x.db' } } },
      /config\.checkpoint: the chart writes this part of raven\.yaml; set the chart's values instead/,
    ],
    [
      'a replica count that is not a number',
      { replicaCount: 'three' },
      /replicaCount: Invalid type\. Expected: integer, given: string|\/replicaCount.*integer/,
    ],
  ];
  for (const [what, values, message] of cases) {
    const { run } = await template(dir, values);
    assert.notEqual(run.code, 0, `${what}: the render fails`);
    assert.match(run.stderr, message, what);
  }
});

test('the chart derives the read rules deploy/rbac.yaml holds for deploy/raven.yaml', async (t) => {
  const dir = await scratch(t);
  const full = parse(await readFile(join(deploy, 'raven.yaml'), 'utf8')) as Record<string, unknown>;
  const config = Object.fromEntries(
    Object.entries(full).filter(
      ([key]) => !['server', 'checkpoint', 'leaderElection', 'shutdown'].includes(key),
    ),
  );
  const objects = await rendered(dir, { config });
  const committed = documents(await readFile(join(deploy, 'rbac.yaml'), 'utf8'));
  const rules = (m: Manifest | undefined): unknown => (m as { rules?: unknown } | undefined)?.rules;
  assert.deepEqual(rules(byKind(objects, 'ClusterRole')[0]), rules(byKind(committed, 'ClusterRole')[0]));
  // Every form a resource is written in the chart can read; explicit rules replace them.
  const forms = await rendered(dir, {
    config: {
      watchers: [
        { name: 'a', resource: 'pods' },
        { name: 'b', resource: 'apps/v1/statefulsets' },
        { name: 'c', resource: 'v1/services' },
        { name: 'd', resource: 'widgets.example.com' },
        { name: 'e', resource: 'deployments.apps' },
      ],
    },
  });
  assert.deepEqual(rules(byKind(forms, 'ClusterRole')[0]), [
    { apiGroups: [''], resources: ['pods', 'services'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['apps'], resources: ['deployments', 'statefulsets'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] },
  ]);
  const explicit = [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }];
  const given = await rendered(dir, { rbac: { rules: explicit } });
  assert.deepEqual(rules(byKind(given, 'ClusterRole')[0]), explicit);
});

test('kustomize renders deploy/ as its files, and deploy-replicas/ as 3 replicas on PostgreSQL the apiserver accepts', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const dir = await scratch(t);

  // The base renders exactly the files it lists.
  const base = await kustomize(deploy);
  const listed = (
    parse(await readFile(join(deploy, 'kustomization.yaml'), 'utf8')) as { resources: string[] }
  ).resources;
  const files = (
    await Promise.all(listed.map(async (f) => documents(await readFile(join(deploy, f), 'utf8'))))
  ).flat();
  const key = (m: Manifest): string => `${m.kind}/${m.metadata.name}`;
  assert.deepEqual(
    [...base].sort((a, b) => key(a).localeCompare(key(b))),
    [...files].sort((a, b) => key(a).localeCompare(key(b))),
  );

  const overlay = await kustomize(join(repo, 'deploy-replicas'));
  assert.deepEqual(byKind(overlay, 'PersistentVolumeClaim'), [], 'no volume claim');
  assert.equal(ravenYaml(overlay), await readFile(join(repo, 'deploy-replicas', 'raven.yaml'), 'utf8'));
  const config = parse(ravenYaml(overlay)) as RavenYaml;
  assert.deepEqual(config.checkpoint, { type: 'postgres', url: '${RAVEN_CHECKPOINT_URL}' });
  assert.equal(config.leaderElection.enabled, true);
  await ravenCheck(dir, ravenYaml(overlay));

  const examples = documents(await readFile(join(repo, 'deploy-replicas', 'secret.example.yaml'), 'utf8'));
  const moved = [...overlay, ...examples].filter((m) => m.kind !== 'Namespace').map((m) => relocate(m, ns));
  await apply(t, plane, moved);
  const deployment = await readBack<DeploymentShape>(plane, byKind(moved, 'Deployment')[0]);
  assert.equal(deployment.spec.replicas, 3);
  assert.equal(deployment.spec.strategy.type, 'RollingUpdate');
  const [container] = deployment.spec.template.spec.containers;
  assert.deepEqual(secretRef(container, 'RAVEN_CHECKPOINT_URL'), { name: 'raven-postgres', key: 'url' });
  assert.deepEqual(secretRef(container, 'RAVEN_REDACTION_KEY'), { name: 'raven-redaction', key: 'key' });
  assert.deepEqual(container?.envFrom, [{ secretRef: { name: 'raven-secrets' } }]);
  const state = deployment.spec.template.spec.volumes.find((v) => v.name === 'state');
  assert.equal(state?.persistentVolumeClaim, undefined);
  assert.ok(state?.emptyDir);
  // The Secrets the Deployment names are the ones the example creates.
  for (const secret of byKind(examples, 'Secret'))
    assert.ok(
      [secretRef(container, 'RAVEN_CHECKPOINT_URL'), secretRef(container, 'RAVEN_REDACTION_KEY')].some(
        (ref) => (ref as { name: string }).name === secret.metadata.name,
      ),
    );

  const pdb = await readBack<PdbShape>(plane, byKind(moved, 'PodDisruptionBudget')[0]);
  assert.equal(pdb.spec.maxUnavailable, 1);
  assert.deepEqual(pdb.spec.selector.matchLabels, deployment.spec.selector.matchLabels);
  const sa = { namespace: ns, name: deployment.spec.template.spec.serviceAccountName };
  const lease = { group: 'coordination.k8s.io', resource: 'leases', namespace: ns };
  assert.equal(await allowed(plane, sa, { ...lease, verb: 'create' }), true);
  assert.equal(await allowed(plane, sa, { ...lease, verb: 'update', name: 'raven' }), true);
  assert.equal(await allowed(plane, sa, { ...lease, verb: 'update', name: 'someone-else' }), false);
});
