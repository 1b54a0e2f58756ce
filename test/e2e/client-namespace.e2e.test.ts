/**
 * Deleting a namespace through ResourceClient: the apiserver marks it Terminating at once, and
 * the controller-manager's namespace controller deletes everything in it before the namespace
 * itself is removed, after which a GET is a 404 and its objects are gone too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap, Namespace, Secret, ServiceAccount } from 'kubernetes-types/core/v1.js';
import type { Role } from 'kubernetes-types/rbac/v1.js';
import { loadConfig } from '../../src/client/load-config.js';
import { KubeClient } from '../../src/client/kube-client.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { ApiError } from '../../src/errors/api-error.js';
import { isNotFound } from '../../src/errors/classify.js';
import { sharedCluster, freshNamespace, deleteNamespace } from '../harness/test-cluster.js';

const core = (
  resource: string,
  namespaced = true,
): { group: string; version: string; resource: string; namespaced: boolean } => ({
  group: '',
  version: 'v1',
  resource,
  namespaced,
});

test('a deleted namespace terminates, its objects are deleted with it, and then a GET is a 404', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane, 'doomed');
  const client = new KubeClient(await loadConfig({ kubeconfig: plane.kubeconfig }));
  t.after(async () => {
    await client.destroy();
    await deleteNamespace(plane, ns);
  });
  const namespaces = new ResourceClient<Namespace>(client, core('namespaces', false));
  const configMaps = new ResourceClient<ConfigMap>(client, core('configmaps'));
  const secrets = new ResourceClient<Secret>(client, core('secrets'));
  const serviceAccounts = new ResourceClient<ServiceAccount>(client, core('serviceaccounts'));
  const roles = new ResourceClient<Role>(client, {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    resource: 'roles',
    namespaced: true,
  });

  for (const name of ['a', 'b', 'c'])
    await configMaps.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns },
      data: { name },
    });
  await secrets.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', namespace: ns },
    stringData: { k: 'v' },
  });
  await serviceAccounts.create({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'robot', namespace: ns },
  });
  await roles.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'reader', namespace: ns },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
  });
  const names = async (): Promise<string[]> =>
    (await configMaps.list({ namespace: ns })).items.map((cm) => cm.metadata?.name ?? '').sort();
  // kube-root-ca.crt is published into each new namespace by a controller, in its own time: wait
  // for it (the deadline is a safety net, never the verdict), then check the whole set.
  for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
    if ((await names()).includes('kube-root-ca.crt')) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.deepEqual(await names(), ['a', 'b', 'c', 'kube-root-ca.crt']);

  // The namespace is answered as Terminating: its kubernetes finalizer holds it until the
  // namespace controller has emptied it.
  const answer = (await namespaces.delete(ns)) as Namespace;
  assert.equal(answer.kind, 'Namespace');
  assert.equal(answer.status?.phase, 'Terminating');
  assert.ok(answer.metadata?.deletionTimestamp !== undefined);
  assert.ok(answer.spec?.finalizers?.includes('kubernetes'));

  const deadline = Date.now() + 120_000;
  for (;;) {
    let last: Namespace;
    try {
      last = await namespaces.get(ns);
    } catch (err) {
      assert.ok(err instanceof ApiError && isNotFound(err), `unexpected error: ${String(err)}`);
      assert.equal(err.reason, 'NotFound');
      assert.equal(err.status.details?.name, ns);
      break;
    }
    // Until it is gone it stays Terminating.
    assert.equal(last.status?.phase, 'Terminating');
    if (Date.now() > deadline) {
      assert.fail(`namespace ${ns} still exists after 120 s: ${JSON.stringify(last.status.conditions)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }

  // Everything in it went with it.
  assert.deepEqual(await names(), []);
  assert.deepEqual((await secrets.list({ namespace: ns })).items, []);
  assert.deepEqual((await serviceAccounts.list({ namespace: ns })).items, []);
  assert.deepEqual((await roles.list({ namespace: ns })).items, []);
  for (const name of ['a', 'b', 'c'])
    await assert.rejects(configMaps.get(name, { namespace: ns }), isNotFound);
  await assert.rejects(secrets.get('s', { namespace: ns }), isNotFound);
});
