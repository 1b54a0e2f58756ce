/**
 * Sharded watches against the real apiserver (Kubernetes 1.36, `ShardedListAndWatch` on in the
 * test control plane): the library's FNV-1a agrees with the apiserver's on every object, for
 * `metadata.uid` and `metadata.namespace`; a sharded watcher gets exactly its range from the
 * server (which echoes the selector in `metadata.shardInfo`), with one range or several joined by
 * `||` (a rendezvous share); and on a control plane with the
 * gate off the watcher notices the missing echo and filters by the same hash itself, ending with
 * the same objects.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/client/load-config.js';
import { KubeClient } from '../../src/client/kube-client.js';
import { fnv1a64 } from '../../src/watch/shard/fnv1a64.js';
import { assignHashSpace } from '../../src/watch/shard/assign-hash-space.js';
import { shardSelector, splitHashSpace, type Shard, type ShardRange } from '../../src/watch/shard/shard.js';
import { watch } from '../../src/watch/watcher.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { deleteNamespace, freshNamespace, privateCluster, sharedCluster } from '../harness/test-cluster.js';

interface Item {
  metadata: { name: string; namespace: string; uid: string };
}
interface List {
  metadata: { shardInfo?: { selector: string } };
  items: Item[];
}

const OBJECTS = 200;

async function list(plane: ControlPlane, path: string, selector?: string): Promise<List> {
  const query = selector === undefined ? '' : `?shardSelector=${encodeURIComponent(selector)}`;
  const { status, body } = await plane.adminRequest('GET', `${path}${query}`);
  assert.equal(status, 200, body);
  return JSON.parse(body) as List;
}

async function populate(plane: ControlPlane, ns: string): Promise<void> {
  for (let i = 0; i < OBJECTS; i++) {
    const { status, body } = await plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: `cm-${i}`, labels: { 'raven.test/shard': 'yes' } },
    });
    assert.equal(status, 201, body);
  }
}

const owned = (shard: Shard, items: Item[]): string[] =>
  items
    .filter((item) => {
      const hash = fnv1a64(item.metadata[shard.field]);
      const ranges = Array.isArray(shard.range) ? shard.range : [shard.range];
      return ranges.some((range: ShardRange) => hash >= range.start && hash < range.end);
    })
    .map((item) => item.metadata.name)
    .sort();

/**
 * List `shard` of `path` with the selector; the server must echo it and return the test's objects
 * whose hash is in the shard (`all` being every one of them). Returns their names.
 */
async function listShard(
  plane: ControlPlane,
  path: string,
  shard: Shard,
  all: Item[],
  what: string,
): Promise<string[]> {
  const answer = await list(plane, path, shardSelector(shard));
  assert.equal(answer.metadata.shardInfo?.selector, shardSelector(shard), 'the selector is echoed');
  const names = answer.items
    .map((i) => i.metadata.name)
    .filter((n) => n.startsWith('cm-'))
    .sort();
  assert.deepEqual(names, owned(shard, all), what);
  return names;
}

/** Run a sharded watcher until synced; its objects' names and how it filtered. */
async function watchShard(
  plane: ControlPlane,
  path: string,
  shard: Shard,
): Promise<{ names: string[]; filtering: string | undefined }> {
  const client = new KubeClient(await loadConfig({ kubeconfig: plane.kubeconfig }));
  const controller = new AbortController();
  const watcher = watch({
    transport: client,
    path,
    shard,
    labelSelector: 'raven.test/shard',
    signal: controller.signal,
  });
  const names: string[] = [];
  try {
    for await (const event of watcher) {
      if (event.type === 'initial' || event.type === 'added') names.push(event.object.metadata?.name ?? '');
      if (event.type === 'synced') break;
    }
  } finally {
    controller.abort();
    watcher.close();
    await client.destroy();
  }
  return { names: names.sort(), filtering: watcher.shardFiltering };
}

test('the apiserver selects by the same FNV-1a hash, for uid and namespace, and echoes the selector', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  await populate(plane, ns);
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  const all = (await list(plane, path)).items.filter((i) => i.metadata.name.startsWith('cm-'));
  assert.equal(all.length, OBJECTS);
  const seen = new Set<string>();
  for (const range of splitHashSpace(4)) {
    const shard: Shard = { field: 'uid', range };
    const names = await listShard(plane, path, shard, all, `the apiserver's shard ${shardSelector(shard)}`);
    for (const name of names) seen.add(name);
  }
  assert.equal(seen.size, OBJECTS, 'the four shards cover every object once');

  // Several ranges in one selector (`a || b || ...`): each of three members' rendezvous shares.
  seen.clear();
  for (const [member, ranges] of assignHashSpace(['raven-0', 'raven-1', 'raven-2'])) {
    const shard: Shard = { field: 'uid', range: ranges };
    assert.ok(ranges.length > 1, `${member} owns several ranges`);
    const names = await listShard(plane, path, shard, all, `the apiserver's share of ${member}`);
    for (const name of names) {
      assert.ok(!seen.has(name), `${name} in one share only`);
      seen.add(name);
    }
  }
  assert.equal(seen.size, OBJECTS, 'the three shares cover every object once');

  // By namespace, across the cluster: each object is in the shard its namespace's hash names,
  // and this test's namespace (whose objects no other test touches) is wholly in one shard.
  const inRange = (value: string, range: { start: bigint; end: bigint }): boolean => {
    const hash = fnv1a64(value);
    return hash >= range.start && hash < range.end;
  };
  for (const range of splitHashSpace(3)) {
    const answer = await list(plane, '/api/v1/configmaps', shardSelector({ field: 'namespace', range }));
    assert.ok(
      answer.items.every((i) => inRange(i.metadata.namespace, range)),
      'nothing outside the range',
    );
    const ours = answer.items.filter((i) => i.metadata.namespace === ns && i.metadata.name.startsWith('cm-'));
    assert.equal(
      ours.length,
      inRange(ns, range) ? OBJECTS : 0,
      `namespace ${ns} in ${shardSelector({ field: 'namespace', range })}`,
    );
  }
});

test('a sharded watcher is served its range by the server, and filters by itself where the gate is off', async (t) => {
  const served = await sharedCluster();
  const ns = await freshNamespace(served);
  t.after(() => deleteNamespace(served, ns));
  await populate(served, ns);
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  const all = (await list(served, path)).items.filter((i) => i.metadata.name.startsWith('cm-'));
  const shard: Shard = { field: 'uid', range: splitHashSpace(3)[1] ?? { start: 0n, end: 1n } };
  // A rendezvous share: several ranges, one watch.
  const share: Shard = {
    field: 'uid',
    range: assignHashSpace(['raven-0', 'raven-1'], { buckets: 16 }).get('raven-1') ?? [],
  };
  for (const s of [shard, share]) {
    const serverSide = await watchShard(served, path, s);
    assert.equal(serverSide.filtering, 'server');
    assert.deepEqual(serverSide.names, owned(s, all));
    assert.ok(serverSide.names.length > 0 && serverSide.names.length < OBJECTS);
  }

  const plain = await privateCluster({ featureGates: { ShardedListAndWatch: false } });
  t.after(() => plain.stop());
  const ns2 = await freshNamespace(plain);
  await populate(plain, ns2);
  const path2 = `/api/v1/namespaces/${ns2}/configmaps`;
  const answer = await list(plain, path2, shardSelector(shard));
  assert.equal(answer.metadata.shardInfo, undefined, 'with the gate off the selector is ignored');
  const all2 = answer.items.filter((i) => i.metadata.name.startsWith('cm-'));
  assert.equal(all2.length, OBJECTS);
  for (const s of [shard, share]) {
    const clientSide = await watchShard(plain, path2, s);
    assert.equal(clientSide.filtering, 'client');
    assert.deepEqual(clientSide.names, owned(s, all2));
  }
});
