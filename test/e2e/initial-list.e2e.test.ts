/**
 * The default initial list against the real apiserver: KubeClient reads the server's version, and
 * a watcher given neither `watchList` nor `pageSize` lists a 1.33-or-later server in one page (no
 * `limit`, no `sendInitialEvents`), then watches; `watchList: true` still streams. The transport
 * is the real client, wrapped only to record each request's query.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/client/load-config.js';
import { KubeClient } from '../../src/client/kube-client.js';
import {
  watch,
  WHOLE_LIST_SINCE,
  type WatcherOptions,
  type WatchTransport,
} from '../../src/watch/watcher.js';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';

/** The client as a watcher's transport, recording the query of every request it sends. */
function recording(client: KubeClient): WatchTransport & { queries: Record<string, unknown>[] } {
  const queries: Record<string, unknown>[] = [];
  return {
    queries,
    stream(request) {
      const query: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(request.query ?? {}))
        if (value !== undefined) query[key] = value;
      queries.push(query);
      return client.stream(request);
    },
    serverVersion: (signal) => client.serverVersion(signal),
  };
}

test('the server tells its version, and a default watcher lists a 1.33+ server in one page', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane, 'initial');
  const client = new KubeClient(await loadConfig({ kubeconfig: plane.kubeconfig }));
  t.after(async () => {
    await client.destroy();
    await deleteNamespace(plane, ns);
  });

  const version = await client.serverVersion();
  const [major, minor] = plane.state.kubernetesVersion.replace(/^v/, '').split('.').map(Number);
  assert.deepEqual(
    version && { major: version.major, minor: version.minor },
    { major, minor },
    `the harness runs ${plane.state.kubernetesVersion}`,
  );
  assert.ok(
    (major ?? 0) > WHOLE_LIST_SINCE.major ||
      (major === WHOLE_LIST_SINCE.major && (minor ?? 0) >= WHOLE_LIST_SINCE.minor),
    'this test needs a server of 1.33 or later',
  );

  const path = `/api/v1/namespaces/${ns}/configmaps`;
  for (const name of ['a', 'b', 'c']) {
    await client.request({ method: 'POST', path, body: { metadata: { name, labels: { test: 'initial' } } } });
  }

  const run = async (
    options: Pick<WatcherOptions, 'watchList'>,
  ): Promise<{ queries: Record<string, unknown>[]; initial: string[]; watchList: boolean }> => {
    const transport = recording(client);
    const watcher = watch({ transport, path, labelSelector: 'test=initial', ...options });
    const initial: string[] = [];
    try {
      for await (const event of watcher) {
        if (event.type === 'error') throw event.error;
        if (event.type === 'initial') initial.push(event.object.metadata?.name ?? '');
        if (event.type === 'synced') break;
      }
      return { queries: transport.queries, initial: initial.sort(), watchList: watcher.status().watchList };
    } finally {
      watcher.close();
    }
  };

  const byDefault = await run({});
  assert.deepEqual(byDefault.initial, ['a', 'b', 'c']);
  assert.equal(byDefault.watchList, false);
  const [list] = byDefault.queries;
  assert.equal(list?.watch, undefined, 'the first request is a list');
  assert.equal(list?.sendInitialEvents, undefined);
  assert.equal(list?.limit, undefined, 'in one page');

  const streamed = await run({ watchList: true });
  assert.deepEqual(streamed.initial, ['a', 'b', 'c']);
  assert.equal(streamed.watchList, true);
  assert.equal(streamed.queries[0]?.sendInitialEvents, true, 'watchList: true still streams');
});
