/**
 * A watcher asking for CBOR against the real apiserver (the test control plane turns on
 * CBORServingAndStorage): the responses really are CBOR, and the events, objects, previous states
 * and tombstones it delivers are exactly those of a JSON watcher over the same changes, through a
 * streaming initial list and a paged list; a Secret's binary data reads as the same
 * base64. A server without CBOR is stood in for by the same apiserver with the Accept header taken
 * off the requests (it then answers JSON, as a server without the feature does): the watcher
 * decodes the JSON and nothing else changes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/client/load-config.js';
import { KubeClient } from '../../src/client/kube-client.js';
import { watch, type WatchEncoding, type WatchTransport } from '../../src/watch/watcher.js';
import type { KubeObject, WatcherEvent } from '../../src/watch/watcher-events.js';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';

/** A transport that records each response's content type (and can drop the Accept header). */
function recording(client: KubeClient, dropAccept = false): WatchTransport & { types: string[] } {
  const types: string[] = [];
  return {
    types,
    async stream(request) {
      const { headers, ...rest } = request;
      const response = await client.stream(dropAccept || headers === undefined ? rest : { ...rest, headers });
      types.push(String(response.headers['content-type']).split(';')[0] ?? '');
      return response;
    },
  };
}

/** What a consumer sees of an event: its type and its objects, in full. */
function seen(event: WatcherEvent): unknown {
  switch (event.type) {
    case 'initial':
    case 'added':
      return [event.type, event.object];
    case 'modified':
      return [event.type, event.object, event.previous];
    case 'deleted':
      return [event.type, event.object, event.tombstone];
    case 'listing':
      return [event.type, event.relist];
    default:
      return undefined;
  }
}

async function collectUntil(
  events: AsyncIterator<WatcherEvent>,
  out: unknown[],
  done: (event: WatcherEvent) => boolean,
): Promise<void> {
  for (;;) {
    const next = await events.next();
    if (next.done === true) throw new Error('the watcher ended');
    const event = next.value;
    if (event.type === 'error') throw event.error;
    const view = seen(event);
    if (view !== undefined) out.push(view);
    if (done(event)) return;
  }
}

const isName = (event: WatcherEvent, type: string, name: string): boolean =>
  event.type === type && 'object' in event && event.object.metadata?.name === name;

for (const watchList of [true, false]) {
  test(
    `a CBOR watcher delivers exactly what a JSON watcher does (${watchList ? 'streaming list' : 'paged list'})`,
    { timeout: 300_000 },
    async (t) => {
      const plane = await sharedCluster();
      const ns = await freshNamespace(plane, 'cbor');
      const client = new KubeClient(await loadConfig({ kubeconfig: plane.kubeconfig }));
      t.after(async () => {
        await client.destroy();
        await deleteNamespace(plane, ns);
      });
      const secrets = `/api/v1/namespaces/${ns}/secrets`;
      const binary = Buffer.from([0, 1, 2, 0xfe, 0xff, 0x80]).toString('base64');
      for (let i = 0; i < 5; i++) {
        await client.request({
          method: 'POST',
          path: secrets,
          body: {
            metadata: { name: `s-${i}`, labels: { i: String(i) } },
            data: { key: binary },
            stringData: { text: `naïve ✓ ${i}` },
          },
        });
      }
      const runs = new Map<
        WatchEncoding,
        { out: unknown[]; events: AsyncIterator<WatcherEvent>; types: string[] }
      >();
      for (const encoding of ['cbor', 'json'] as const) {
        const transport = recording(client);
        const watcher = watch({ transport, path: secrets, encoding, watchList, pageSize: 2 });
        t.after(() => {
          watcher.close();
        });
        runs.set(encoding, { out: [], events: watcher[Symbol.asyncIterator](), types: transport.types });
      }
      const each = async (done: (event: WatcherEvent) => boolean): Promise<void> => {
        for (const run of runs.values()) await collectUntil(run.events, run.out, done);
      };
      await each((event) => event.type === 'synced');
      await client.request({
        method: 'PATCH',
        path: `${secrets}/s-1`,
        contentType: 'application/merge-patch+json',
        body: { data: { more: binary } },
      });
      await client.request({ method: 'DELETE', path: `${secrets}/s-2` });
      await client.request({
        method: 'POST',
        path: secrets,
        body: { metadata: { name: 'late' }, data: { key: binary } },
      });
      await each((event) => isName(event, 'added', 'late'));

      const cbor = runs.get('cbor');
      const json = runs.get('json');
      assert.ok(cbor !== undefined && json !== undefined);
      assert.deepEqual(cbor.out, json.out);
      // The initial state, the patch with its previous state, the deletion and the late add.
      assert.equal(cbor.out.filter((e) => (e as unknown[])[0] === 'initial').length, 5);
      const modified = cbor.out.find((e) => (e as unknown[])[0] === 'modified') as [
        string,
        KubeObject & { data: Record<string, string> },
        KubeObject & { data: Record<string, string> },
      ];
      assert.equal(modified[1].data.more, binary);
      assert.equal(modified[2].data.more, undefined);
      assert.equal(modified[2].data.key, binary);
      assert.ok(cbor.out.some((e) => (e as unknown[])[0] === 'deleted'));
      // Every response to the CBOR watcher was CBOR; every one to the JSON watcher JSON.
      assert.ok(cbor.types.length >= (watchList ? 1 : 4), cbor.types.join(' '));
      for (const type of cbor.types) assert.match(type, /^application\/cbor(-seq)?$/);
      for (const type of json.types) assert.equal(type, 'application/json');
    },
  );
}

test(
  'a CBOR watcher answered in JSON (a server without CBOR) decodes it as usual',
  { timeout: 300_000 },
  async (t) => {
    const plane = await sharedCluster();
    const ns = await freshNamespace(plane, 'cbor');
    const client = new KubeClient(await loadConfig({ kubeconfig: plane.kubeconfig }));
    t.after(async () => {
      await client.destroy();
      await deleteNamespace(plane, ns);
    });
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    await client.request({
      method: 'POST',
      path,
      body: { metadata: { name: 'before', labels: { test: 'cbor' } }, data: { v: '1' } },
    });
    const transport = recording(client, true);
    const watcher = watch({
      transport,
      path,
      encoding: 'cbor',
      watchList: false,
      labelSelector: 'test=cbor',
    });
    t.after(() => {
      watcher.close();
    });
    const events = watcher[Symbol.asyncIterator]();
    const out: unknown[] = [];
    await collectUntil(events, out, (event) => event.type === 'synced');
    await client.request({
      method: 'POST',
      path,
      body: { metadata: { name: 'after', labels: { test: 'cbor' } }, data: { v: '2' } },
    });
    await collectUntil(events, out, (event) => isName(event, 'added', 'after'));
    assert.deepEqual(
      out.map((e) => {
        const [type, object] = e as [string, KubeObject & { data?: Record<string, string> }];
        return `${type} ${object.metadata?.name ?? ''} ${object.data?.v ?? ''}`.trim();
      }),
      ['listing', 'initial before 1', 'added after 2'],
    );
    assert.deepEqual(transport.types, ['application/json', 'application/json']);
  },
);
