import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { Controller } from '../../../src/controller/controller.js';
import { Informer, type InformerSource } from '../../../src/informer/informer.js';
import type { KubeObject } from '../../../src/client/kube-object.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import type { WatcherEvent, WatcherStatus } from '../../../src/watch/watcher-events.js';

/** A source that lists the given objects once and then stays open until closed. */
function listed<T extends KubeObject>(objects: T[]): () => InformerSource<T> {
  return () => {
    let close: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (close = resolve));
    const status = { phase: 'watching', synced: true, objects: objects.length } as WatcherStatus;
    return {
      status: () => status,
      close,
      async *[Symbol.asyncIterator](): AsyncIterator<WatcherEvent<T>> {
        yield { type: 'listing', relist: false };
        for (const object of objects) yield { type: 'initial', object };
        yield { type: 'synced', resourceVersion: '1', relist: false };
        await closed;
      },
    };
  };
}

test('typed informers with indexes are accepted as owned triggers and map to their owners', async () => {
  const clock = new FakeClock();
  const keeper: KubeObject = { metadata: { name: 'web', namespace: 'ns', uid: 'u1' } };
  const pod: Pod = {
    metadata: {
      name: 'web-a',
      namespace: 'ns',
      ownerReferences: [{ apiVersion: 'x/v1', kind: 'Keeper', name: 'web', uid: 'u1', controller: true }],
    },
  };
  const primary = new Informer<KubeObject>({ source: listed([keeper]), clock });
  const pods = new Informer<Pod>({
    source: listed([pod]),
    clock,
    indexers: { byOwnerUid: (p) => (p.metadata?.ownerReferences ?? []).map((r) => r.uid) },
  });
  const seen: string[] = [];
  const controller = new Controller({
    name: 'typed',
    primary,
    owns: [pods],
    watches: [{ informer: pods, map: () => [] }],
    ownerKind: 'Keeper',
    reconcile: async (key) => {
      await Promise.resolve();
      seen.push(key);
      return undefined;
    },
    clock,
  });
  const abort = new AbortController();
  const runs = [primary.run(abort.signal), pods.run(abort.signal), controller.run(abort.signal)];
  await clock.tick(100);
  assert.deepEqual(seen, ['ns/web']);
  assert.equal(controller.status().synced, true);
  abort.abort();
  await Promise.all(runs);
});
