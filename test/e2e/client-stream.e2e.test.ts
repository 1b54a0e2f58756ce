/**
 * KubeClient.stream() against a real apiserver: a watch delivers the changes made after the listed
 * resourceVersion as newline-delimited JSON, aborting the signal ends the body iteration with the
 * signal's reason, and a refused watch is an ApiError before any body is handed out.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { loadConfig } from '../../src/client/load-config.js';
import { KubeClient } from '../../src/client/kube-client.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { ApiError } from '../../src/errors/api-error.js';
import { isForbidden } from '../../src/errors/classify.js';
import { sharedCluster, freshNamespace, deleteNamespace } from '../harness/test-cluster.js';

const configMapsRef = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };

interface WatchEvent {
  type: string;
  object: ConfigMap;
}

async function setUp(t: {
  after: (fn: () => Promise<void>) => void;
}): Promise<{ client: KubeClient; ns: string; configMaps: ResourceClient<ConfigMap> }> {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  const config = await loadConfig({ kubeconfig: plane.kubeconfig });
  const client = new KubeClient({ ...config, namespace: ns });
  t.after(async () => {
    await client.destroy();
    await deleteNamespace(plane, ns);
  });
  return { client, ns, configMaps: new ResourceClient<ConfigMap>(client, configMapsRef) };
}

/** Split a byte stream into decoded JSON lines. */
async function* lines(body: AsyncIterable<Uint8Array>): AsyncGenerator<WatchEvent> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.trim() !== '') yield JSON.parse(line) as WatchEvent;
    }
  }
}

test('a watch stream delivers the changes after the listed resourceVersion, in order', async (t) => {
  const { client, ns, configMaps } = await setUp(t);
  await configMaps.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before' } });
  const list = await configMaps.list({ namespace: ns });
  const controller = new AbortController();
  t.after(() => controller.abort());
  const res = await client.stream({
    path: `/api/v1/namespaces/${ns}/configmaps`,
    query: { watch: true, resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: false },
    signal: controller.signal,
  });
  assert.equal(res.statusCode, 200);

  await configMaps.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w' }, data: { v: '1' } });
  await configMaps.patch('w', { data: { v: '2' } }, { type: 'merge' });
  await configMaps.delete('w');

  const seen: string[] = [];
  for await (const event of lines(res.body)) {
    seen.push(`${event.type} ${event.object.metadata?.name ?? ''} ${event.object.data?.v ?? ''}`);
    if (event.type === 'DELETED') break;
  }
  // 'before' was listed, so the watch starts after it.
  assert.deepEqual(seen, ['ADDED w 1', 'MODIFIED w 2', 'DELETED w 2']);
});

test('aborting the signal ends an open watch body with the signal reason', async (t) => {
  const { client, ns } = await setUp(t);
  const controller = new AbortController();
  const res = await client.stream({
    path: `/api/v1/namespaces/${ns}/configmaps`,
    query: { watch: true, resourceVersion: '0' },
    signal: controller.signal,
  });
  const reason = new Error('stop watching');
  const consumed = (async () => {
    // The namespace's kube-root-ca.crt arrives first (resourceVersion 0 starts with a synthetic ADDED).
    for await (const event of lines(res.body)) {
      if (event.type === 'ADDED') controller.abort(reason);
    }
  })();
  await assert.rejects(consumed, (err: unknown) => err === reason);
});

test('a watch the credentials may not open is an ApiError with the Status', async (t) => {
  const { client } = await setUp(t);
  // The admin client impersonating a user that no binding mentions.
  const err = await client
    .stream({
      path: '/api/v1/configmaps',
      query: { watch: true },
      headers: { 'impersonate-user': 'raven-nobody' },
    })
    .then(
      () => assert.fail('the watch was opened'),
      (e: unknown) => e,
    );
  assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
  assert.ok(isForbidden(err));
  assert.match(err.status.message ?? '', /"raven-nobody" cannot watch resource "configmaps"/);
  assert.deepEqual(err.request, { method: 'GET', path: '/api/v1/configmaps?watch=true' });
});
