/**
 * ResourceClient against a real apiserver: create, get, list with selectors and pagination,
 * optimistic concurrency (a stale resourceVersion is a 409), every patch type with the
 * semantics the apiserver gives it, server-side apply field ownership, delete preconditions and
 * foreground deletion completed by the controller-manager's garbage collector.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import type { Deployment, ReplicaSet } from 'kubernetes-types/apps/v1.js';
import { loadConfig } from '../../src/client/load-config.js';
import { KubeClient } from '../../src/client/kube-client.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { ApiError } from '../../src/errors/api-error.js';
import { isConflict, isInvalid, isNotFound } from '../../src/errors/classify.js';
import { sharedCluster, freshNamespace, deleteNamespace } from '../harness/test-cluster.js';

const configMapsRef = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };
const deploymentsRef = { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true };
const replicaSetsRef = { group: 'apps', version: 'v1', resource: 'replicasets', namespaced: true };

interface Fixture {
  client: KubeClient;
  ns: string;
  configMaps: ResourceClient<ConfigMap>;
  deployments: ResourceClient<Deployment>;
}

/** A fresh namespace and an admin client whose default namespace it is; both gone afterwards. */
async function setUp(t: { after: (fn: () => Promise<void>) => void }): Promise<Fixture> {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  const config = await loadConfig({ kubeconfig: plane.kubeconfig });
  const client = new KubeClient({ ...config, namespace: ns });
  t.after(async () => {
    await client.destroy();
    await deleteNamespace(plane, ns);
  });
  return {
    client,
    ns,
    configMaps: new ResourceClient<ConfigMap>(client, configMapsRef),
    deployments: new ResourceClient<Deployment>(client, deploymentsRef),
  };
}

function configMap(name: string, data: Record<string, string>, labels?: Record<string, string>): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data };
}

function deployment(name: string, replicas: number): Deployment {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'main', image: 'registry.invalid/main:1' }] },
      },
    },
  };
}

/** The error a promise rejects with (fails the test if it resolves). */
async function failure(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => assert.fail('expected the apiserver to refuse'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
  return err;
}

/** Poll `probe` until it answers true; eventual states only, with a generous deadline. */
async function eventually(what: string, probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) assert.fail(`${what}: not reached within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('create then get answers the stored object in the client namespace', async (t) => {
  const { ns, configMaps } = await setUp(t);
  const created = await configMaps.create(configMap('one', { a: '1' }));
  assert.equal(created.metadata?.namespace, ns);
  assert.ok(created.metadata.uid !== undefined && created.metadata.resourceVersion !== undefined);
  const got = await configMaps.get('one');
  assert.deepEqual(got.data, { a: '1' });
  assert.equal(got.metadata?.uid, created.metadata.uid);
  assert.ok(isNotFound(await failure(configMaps.get('missing'))));
  const duplicate = await failure(configMaps.create(configMap('one', { a: '2' })));
  assert.equal(duplicate.reason, 'AlreadyExists');
});

test('list filters by labelSelector and pages with limit and continue', async (t) => {
  const { ns, configMaps } = await setUp(t);
  const names = Array.from({ length: 25 }, (_, i) => `paged-${String(i).padStart(2, '0')}`);
  for (const name of names) await configMaps.create(configMap(name, { n: name }, { set: 'paged' }));
  await configMaps.create(configMap('other', {}, { set: 'other' }));

  const first = await configMaps.list({ namespace: ns, labelSelector: 'set=paged', limit: 10 });
  assert.equal(first.items.length, 10);
  assert.ok(first.metadata?.continue, 'a first page of 10 out of 25 has a continue token');
  // The apiserver counts what remains only for unfiltered lists (here 25 + other + kube-root-ca.crt).
  assert.equal(first.metadata.remainingItemCount, undefined);
  const unfiltered = await configMaps.list({ namespace: ns, limit: 10 });
  assert.equal(unfiltered.metadata?.remainingItemCount, 17);
  const second = await configMaps.list({
    namespace: ns,
    labelSelector: 'set=paged',
    limit: 10,
    continue: first.metadata.continue,
  });
  assert.deepEqual(
    second.items.map((cm) => cm.metadata?.name),
    names.slice(10, 20),
  );

  const pages = [];
  for await (const page of configMaps.pages({ namespace: ns, labelSelector: 'set=paged', limit: 10 })) {
    pages.push(page.items.map((cm) => cm.metadata?.name));
  }
  assert.deepEqual(pages, [names.slice(0, 10), names.slice(10, 20), names.slice(20)]);

  const all: string[] = [];
  for await (const cm of configMaps.listAll({
    namespace: ns,
    labelSelector: 'set in (paged,other)',
    limit: 7,
  }))
    all.push(cm.metadata?.name ?? '');
  // The apiserver answers in key (name) order.
  assert.deepEqual(all, ['other', ...names]);

  const others = await configMaps.list({ namespace: ns, labelSelector: 'set!=paged,set' });
  assert.deepEqual(
    others.items.map((cm) => cm.metadata?.name),
    ['other'],
  );
});

test('replace with a stale resourceVersion is a 409 Conflict, with the current one it succeeds', async (t) => {
  const { configMaps } = await setUp(t);
  const v1 = await configMaps.create(configMap('cas', { step: '1' }));
  const v2 = await configMaps.replace('cas', { ...v1, data: { step: '2' } });
  assert.notEqual(v2.metadata?.resourceVersion, v1.metadata?.resourceVersion);

  const err = await failure(configMaps.replace('cas', { ...v1, data: { step: 'stale' } }));
  assert.ok(isConflict(err));
  assert.equal(err.statusCode, 409);
  assert.equal(err.reason, 'Conflict');
  assert.match(err.status.message ?? '', /the object has been modified/);
  assert.equal(err.request?.method, 'PUT');
  assert.deepEqual((await configMaps.get('cas')).data, { step: '2' });

  const v3 = await configMaps.replace('cas', { ...v2, data: { step: '3' } });
  assert.deepEqual(v3.data, { step: '3' });
});

test('a merge patch sets and removes keys (null deletes)', async (t) => {
  const { configMaps } = await setUp(t);
  await configMaps.create(configMap('merge', { keep: 'k', drop: 'd' }, { tier: 'a' }));
  const patched = await configMaps.patch(
    'merge',
    { metadata: { labels: { extra: 'x' } }, data: { drop: null, added: 'new' } },
    { type: 'merge' },
  );
  assert.deepEqual(patched.data, { keep: 'k', added: 'new' });
  assert.deepEqual(patched.metadata?.labels, { tier: 'a', extra: 'x' });
});

test('a strategic merge patch merges a container list by name where a merge patch replaces it', async (t) => {
  const { deployments } = await setUp(t);
  await deployments.create(deployment('web', 0));
  const sidecar = { name: 'sidecar', image: 'registry.invalid/sidecar:1' };

  const strategic = await deployments.patch(
    'web',
    {
      spec: {
        template: { spec: { containers: [sidecar, { name: 'main', image: 'registry.invalid/main:2' }] } },
      },
    },
    { type: 'strategic' },
  );
  assert.deepEqual(
    strategic.spec?.template.spec?.containers.map((c) => `${c.name}=${c.image ?? ''}`),
    ['sidecar=registry.invalid/sidecar:1', 'main=registry.invalid/main:2'],
  );
  const onlyImage = await deployments.patch(
    'web',
    {
      spec: {
        template: { spec: { containers: [{ name: 'sidecar', image: 'registry.invalid/sidecar:2' }] } },
      },
    },
    { type: 'strategic' },
  );
  assert.deepEqual(
    onlyImage.spec?.template.spec?.containers.map((c) => `${c.name}=${c.image ?? ''}`),
    ['sidecar=registry.invalid/sidecar:2', 'main=registry.invalid/main:2'],
    'strategic: the other container is kept',
  );

  const merged = await deployments.patch(
    'web',
    { spec: { template: { spec: { containers: [{ name: 'main', image: 'registry.invalid/main:3' }] } } } },
    { type: 'merge' },
  );
  assert.deepEqual(
    merged.spec?.template.spec?.containers.map((c) => `${c.name}=${c.image ?? ''}`),
    ['main=registry.invalid/main:3'],
    'merge: the list is replaced as a whole',
  );
});

test('a JSON patch applies its operations in order and a failed test operation changes nothing', async (t) => {
  const { configMaps } = await setUp(t);
  const created = await configMaps.create(configMap('json', { a: '1', b: '2' }));
  const patched = await configMaps.patch(
    'json',
    [
      { op: 'test', path: '/data/a', value: '1' },
      { op: 'replace', path: '/data/a', value: 'one' },
      { op: 'remove', path: '/data/b' },
      { op: 'add', path: '/metadata/labels', value: { 'raven.test/patched': 'json' } },
    ],
    { type: 'json' },
  );
  assert.deepEqual(patched.data, { a: 'one' });
  assert.deepEqual(patched.metadata?.labels, { 'raven.test/patched': 'json' });

  const err = await failure(
    configMaps.patch(
      'json',
      [
        { op: 'test', path: '/data/a', value: '1' },
        { op: 'replace', path: '/data/a', value: 'never' },
      ],
      { type: 'json' },
    ),
  );
  assert.ok(isInvalid(err), `a failed test operation is a client error, got ${err.message}`);
  const after = await configMaps.get('json');
  assert.deepEqual(after.data, { a: 'one' });
  assert.notEqual(after.metadata?.resourceVersion, created.metadata?.resourceVersion);
  assert.equal(after.metadata?.resourceVersion, patched.metadata.resourceVersion);
});

test('server-side apply records the field manager, refuses a conflicting manager with 409 and yields to force', async (t) => {
  const { configMaps } = await setUp(t);
  const first = await configMaps.apply(configMap('ssa', { owner: 'alpha', shared: 'x' }), {
    fieldManager: 'raven-alpha',
  });
  assert.deepEqual(first.data, { owner: 'alpha', shared: 'x' });
  assert.ok(
    first.metadata?.managedFields?.some((f) => f.manager === 'raven-alpha' && f.operation === 'Apply'),
  );

  // Applying the same value for a field another manager owns is shared ownership, not a conflict.
  await configMaps.apply(configMap('ssa', { shared: 'x', beta: 'b' }), { fieldManager: 'raven-beta' });

  const err = await failure(
    configMaps.apply(configMap('ssa', { owner: 'beta' }), { fieldManager: 'raven-beta' }),
  );
  assert.ok(isConflict(err));
  assert.equal(err.reason, 'Conflict');
  assert.match(err.status.message ?? '', /conflict with "raven-alpha".*\.data\.owner/s);
  assert.ok(
    err.status.details?.causes?.some((c) => c.reason === 'FieldManagerConflict' && c.field === '.data.owner'),
    JSON.stringify(err.status.details),
  );
  assert.equal((await configMaps.get('ssa')).data?.owner, 'alpha');

  const forced = await configMaps.apply(configMap('ssa', { owner: 'beta' }), {
    fieldManager: 'raven-beta',
    force: true,
  });
  assert.equal(forced.data?.owner, 'beta');
  // raven-beta's configuration is now owner alone: beta, which only it managed, is removed;
  // shared stays because raven-alpha still manages it.
  assert.deepEqual(forced.data, { owner: 'beta', shared: 'x' });

  // The patch() form with a field manager is the same request.
  const viaPatch = await configMaps.patch(
    'ssa',
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa' }, data: { owner: 'gamma' } },
    { type: 'apply', fieldManager: 'raven-gamma', force: true },
  );
  assert.equal(viaPatch.data?.owner, 'gamma');
});

test('delete with a mismatched uid precondition is a 409 and keeps the object', async (t) => {
  const { configMaps } = await setUp(t);
  const created = await configMaps.create(configMap('precondition', { a: '1' }));
  const err = await failure(
    configMaps.delete('precondition', { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } }),
  );
  assert.ok(isConflict(err));
  assert.match(
    err.status.message ?? '',
    /the UID in the precondition \(0{8}-.*\) does not match the UID in record/,
  );
  assert.equal((await configMaps.get('precondition')).metadata?.uid, created.metadata?.uid);

  await configMaps.delete('precondition', { preconditions: { uid: created.metadata?.uid ?? '' } });
  assert.ok(isNotFound(await failure(configMaps.get('precondition'))));
});

test('foreground deletion of a Deployment waits for the garbage collector to delete its ReplicaSet and Pod', async (t) => {
  const { client, ns, deployments } = await setUp(t);
  const replicaSets = new ResourceClient<ReplicaSet>(client, replicaSetsRef);
  const podsOf = new ResourceClient(client, { group: '', version: 'v1', resource: 'pods', namespaced: true });
  const created = await deployments.create(deployment('fg', 1));
  const uid = created.metadata?.uid ?? '';
  const owned = async (): Promise<ReplicaSet[]> =>
    (await replicaSets.list({ namespace: ns, labelSelector: 'app=fg' })).items.filter((rs) =>
      rs.metadata?.ownerReferences?.some((ref) => ref.uid === uid),
    );
  const pods = async (): Promise<number> =>
    (await podsOf.list({ namespace: ns, labelSelector: 'app=fg' })).items.length;
  // The deployment controller makes the ReplicaSet, the replicaset controller its Pod.
  await eventually('the Deployment has a ReplicaSet', async () => (await owned()).length === 1);
  await eventually('the ReplicaSet has a Pod', async () => (await pods()) === 1);

  const answer = (await deployments.delete('fg', { propagationPolicy: 'Foreground' })) as Deployment;
  // Foreground deletion answers the object, marked for deletion and held by the GC's finalizer.
  assert.equal(answer.kind, 'Deployment');
  assert.ok(answer.metadata?.deletionTimestamp !== undefined);
  assert.ok(answer.metadata.finalizers?.includes('foregroundDeletion'));

  await eventually('the ReplicaSet is garbage-collected', async () => (await owned()).length === 0);
  await eventually('the Pod is garbage-collected', async () => (await pods()) === 0);
  await eventually('the Deployment is gone', async () => {
    try {
      await deployments.get('fg');
      return false;
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
  });
});

test('dry-run writes are validated but not persisted, and strict field validation names the unknown field', async (t) => {
  const { configMaps } = await setUp(t);
  const dry = await configMaps.create(configMap('dry', { a: '1' }), { dryRun: true });
  assert.equal(dry.metadata?.name, 'dry');
  assert.ok(isNotFound(await failure(configMaps.get('dry'))));

  const real = await configMaps.create(configMap('real', { a: '1' }));
  const dryPatched = await configMaps.patch('real', { data: { a: '2' } }, { type: 'merge', dryRun: true });
  assert.deepEqual(dryPatched.data, { a: '2' });
  await configMaps.delete('real', { dryRun: true });
  const kept = await configMaps.get('real');
  assert.deepEqual(kept.data, { a: '1' });
  assert.equal(kept.metadata?.resourceVersion, real.metadata?.resourceVersion);

  const strict = await failure(
    configMaps.create({ ...configMap('strict', {}), colour: 'red' } as ConfigMap, {
      fieldValidation: 'Strict',
    }),
  );
  assert.ok(isInvalid(strict));
  assert.match(strict.status.message ?? '', /unknown field "colour"/);
});

test('deleteCollection deletes only the objects its label selector matches', async (t) => {
  const { ns, configMaps } = await setUp(t);
  for (const name of ['x1', 'x2', 'x3']) await configMaps.create(configMap(name, {}, { batch: 'x' }));
  await configMaps.create(configMap('y1', {}, { batch: 'y' }));
  await configMaps.deleteCollection({ labelSelector: 'batch=x' });
  const left = await configMaps.list({ namespace: ns, labelSelector: 'batch' });
  assert.deepEqual(
    left.items.map((cm) => cm.metadata?.name),
    ['y1'],
  );
});

test('names with characters that need escaping in a path, such as a colon, are reachable', async (t) => {
  const { client } = await setUp(t);
  const clusterRoles = new ResourceClient(client, {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    resource: 'clusterroles',
    namespaced: false,
  });
  const role = await clusterRoles.get('system:basic-user');
  assert.equal(role.metadata?.name, 'system:basic-user');
});
