/**
 * The contract every {@link Store} implementation must pass. Call {@link storeContract} from a
 * test file with a factory; each guarantee listed in `src/cache/store.ts` has a test here.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { RavenError } from '../../../src/errors/raven-error.js';
import { dropManagedFields } from '../../../src/watch/decode/drop-managed-fields.js';
import { makeObjectKey, type ObjectKey } from '../../../src/client/object-key.js';
import { NAMESPACE_INDEX, type Indexers, type Store } from '../../../src/cache/store.js';
import type { FreezeMode } from '../../../src/cache/deep-freeze.js';
import { flushMicrotasks } from '../../../src/testing/fake-clock.js';

/** The options a contract test may ask a factory for. */
export interface ContractStoreOptions {
  indexers?: Indexers<Pod>;
  transform?: (obj: Pod) => Pod;
  freeze?: FreezeMode;
}

export type StoreFactory = (options: ContractStoreOptions) => Store<Pod>;

export function pod(
  namespace: string | undefined,
  name: string,
  extra: { rv?: string; app?: string; node?: string; tags?: string[] } = {},
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      ...(extra.rv === undefined ? {} : { resourceVersion: extra.rv }),
      labels: { app: extra.app ?? 'web', tags: (extra.tags ?? []).join('.') },
    },
    spec: {
      containers: [{ name: 'main', image: 'nginx' }],
      ...(extra.node === undefined ? {} : { nodeName: extra.node }),
    },
  };
}

const key = (ns: string | undefined, name: string): ObjectKey => makeObjectKey(name, ns);

const byApp: Indexers<Pod> = {
  app: (p) => (p.metadata?.labels?.app === undefined ? [] : [p.metadata.labels.app]),
};
const byTag: Indexers<Pod> = {
  tag: (p) => (p.metadata?.labels?.tags ?? '').split('.').filter((t) => t !== ''),
};

const sorted = (values: readonly string[]): string[] => [...values].sort();

export function storeContract(name: string, create: StoreFactory): void {
  describe(`${name} store contract`, () => {
    test('an added object can be read back by key and appears in list, keys and size', () => {
      const store = create({});
      store.add(pod('default', 'a', { rv: '1' }));
      store.add(pod(undefined, 'node-scoped', { rv: '2' }));
      assert.equal(store.get(key('default', 'a'))?.metadata?.name, 'a');
      assert.equal(store.get(key(undefined, 'node-scoped'))?.metadata?.name, 'node-scoped');
      assert.equal(store.get(key('other', 'a')), undefined);
      assert.equal(store.size, 2);
      assert.deepEqual(sorted(store.keys()), ['default/a', 'node-scoped']);
      assert.equal(store.list().length, 2);
    });

    test('writes report the cached object before and after', () => {
      const store = create({});
      const first = store.add(pod('default', 'a', { rv: '1' }));
      assert.equal(first.key, 'default/a');
      assert.equal(first.old, undefined);
      assert.equal(first.new?.metadata?.resourceVersion, '1');
      const second = store.update(pod('default', 'a', { rv: '2' }));
      assert.equal(second.old?.metadata?.resourceVersion, '1');
      assert.equal(second.new?.metadata?.resourceVersion, '2');
      const gone = store.delete(pod('default', 'a', { rv: '3' }));
      assert.equal(gone.old?.metadata?.resourceVersion, '2');
      assert.equal(gone.new, undefined);
      assert.equal(store.delete(pod('default', 'a')).old, undefined);
    });

    test('the last applied resourceVersion follows single-object writes and replace', () => {
      const store = create({});
      assert.equal(store.resourceVersion, undefined);
      store.add(pod('default', 'a', { rv: '10' }));
      assert.equal(store.resourceVersion, '10');
      store.delete(pod('default', 'a', { rv: '12' }));
      assert.equal(store.resourceVersion, '12');
      store.replace([pod('default', 'b', { rv: '5' })], '20');
      assert.equal(store.resourceVersion, '20');
    });

    test('the built-in namespace index lists namespaced objects and leaves cluster-scoped ones out', () => {
      const store = create({});
      store.add(pod('ns1', 'a'));
      store.add(pod('ns1', 'b'));
      store.add(pod('ns2', 'a'));
      store.add(pod(undefined, 'cluster'));
      assert.deepEqual(sorted(store.indexKeys(NAMESPACE_INDEX, 'ns1')), ['ns1/a', 'ns1/b']);
      assert.deepEqual(
        store.byIndex(NAMESPACE_INDEX, 'ns2').map((p) => p.metadata?.name),
        ['a'],
      );
      assert.deepEqual(sorted(store.listIndexValues(NAMESPACE_INDEX)), ['ns1', 'ns2']);
    });

    test('an update moves the object between index values and a delete removes it from the index', () => {
      const store = create({ indexers: byApp });
      store.add(pod('default', 'a', { app: 'web' }));
      store.add(pod('default', 'b', { app: 'web' }));
      store.update(pod('default', 'a', { app: 'db' }));
      assert.deepEqual(store.indexKeys('app', 'web'), ['default/b']);
      assert.deepEqual(store.indexKeys('app', 'db'), ['default/a']);
      store.delete(pod('default', 'b'));
      assert.deepEqual(store.indexKeys('app', 'web'), []);
      assert.deepEqual(store.listIndexValues('app'), ['db']);
    });

    test('an index function may list an object under several values or none', () => {
      const store = create({ indexers: byTag });
      store.add(pod('default', 'a', { tags: ['x', 'y', 'x'] }));
      store.add(pod('default', 'b', { tags: ['y'] }));
      store.add(pod('default', 'c', { tags: [] }));
      assert.deepEqual(store.indexKeys('tag', 'x'), ['default/a']);
      assert.deepEqual(sorted(store.indexKeys('tag', 'y')), ['default/a', 'default/b']);
      assert.deepEqual(sorted(store.listIndexValues('tag')), ['x', 'y']);
      assert.deepEqual(sorted(store.byIndex('tag', 'y').map((p) => p.metadata?.name ?? '')), ['a', 'b']);
    });

    test('asking for an unknown index throws an error naming the indexes that exist', () => {
      const store = create({ indexers: byApp });
      assert.throws(
        () => store.byIndex('nope', 'x'),
        (err: unknown) =>
          err instanceof RavenError && err.code === 'ERR_UNKNOWN_INDEX' && /namespace, app/.test(err.message),
      );
      assert.throws(() => store.listIndexValues('nope'), RavenError);
    });

    test('replace swaps the whole contents and rebuilds every index', () => {
      const store = create({ indexers: byApp });
      store.add(pod('ns1', 'old', { app: 'web' }));
      store.replace([pod('ns2', 'new1', { app: 'db' }), pod('ns2', 'new2', { app: 'db' })], '100');
      assert.deepEqual(sorted(store.keys()), ['ns2/new1', 'ns2/new2']);
      assert.deepEqual(store.indexKeys('app', 'web'), []);
      assert.deepEqual(store.indexKeys(NAMESPACE_INDEX, 'ns1'), []);
      assert.deepEqual(sorted(store.indexKeys('app', 'db')), ['ns2/new1', 'ns2/new2']);
      assert.deepEqual(store.listIndexValues(NAMESPACE_INDEX), ['ns2']);
    });

    test('replace reports added, updated, unchanged and deleted keys with the old objects', () => {
      const store = create({});
      store.replace(
        [pod('d', 'keep', { rv: '1' }), pod('d', 'change', { rv: '1' }), pod('d', 'gone', { rv: '1' })],
        '1',
      );
      const result = store.replace(
        [pod('d', 'keep', { rv: '1' }), pod('d', 'change', { rv: '2' }), pod('d', 'fresh', { rv: '3' })],
        '3',
      );
      assert.deepEqual(result.added, ['d/fresh']);
      assert.deepEqual(result.updated, ['d/change']);
      assert.deepEqual(result.unchanged, ['d/keep']);
      assert.deepEqual(result.deleted, ['d/gone']);
      assert.equal(result.old.get(key('d', 'gone'))?.metadata?.name, 'gone');
      assert.equal(result.old.get(key('d', 'change'))?.metadata?.resourceVersion, '1');
      assert.equal(result.old.has(key('d', 'fresh')), false);
    });

    test('a duplicate key in a replace list keeps the last object', () => {
      const store = create({ indexers: byApp });
      store.replace([pod('d', 'a', { app: 'one' }), pod('d', 'a', { app: 'two' })], '1');
      assert.equal(store.size, 1);
      assert.deepEqual(store.listIndexValues('app'), ['two']);
    });

    test('a reader running during a replace sees the complete old contents, never a mix', () => {
      const seen: number[] = [];
      let watching = false;
      const store = create({
        transform: (p) => {
          if (watching) {
            seen.push(store.size);
            assert.equal(store.indexKeys(NAMESPACE_INDEX, 'old').length, store.size);
            assert.deepEqual(store.listIndexValues(NAMESPACE_INDEX), ['old']);
          }
          return p;
        },
      });
      store.replace([pod('old', 'a'), pod('old', 'b'), pod('old', 'c')], '1');
      watching = true;
      store.replace([pod('new', 'x'), pod('new', 'y')], '2');
      assert.deepEqual(seen, [3, 3]);
      assert.equal(store.indexKeys(NAMESPACE_INDEX, 'new').length, 2);
    });

    test('a concurrent reader interleaved with replaces always sees one generation with matching indexes', async () => {
      const store = create({ indexers: byApp });
      const generation = (n: number): Pod[] =>
        Array.from({ length: 20 + n }, (_, i) => pod('d', `p${i}`, { app: `gen${n}`, rv: `${n}` }));
      store.replace(generation(0), '0');
      let stop = false;
      let observations = 0;
      const reader = (async () => {
        while (!stop) {
          const list = store.list();
          const gens = new Set(list.map((p) => p.metadata?.labels?.app));
          assert.equal(gens.size, 1);
          const [gen] = [...gens];
          assert.equal(store.indexKeys('app', gen ?? '').length, list.length);
          assert.deepEqual(store.listIndexValues('app'), [gen]);
          observations++;
          await Promise.resolve();
        }
      })();
      for (let n = 1; n <= 10; n++) {
        store.replace(generation(n), `${n}`);
        // Microtask turns only: the reader loop yields with microtasks, so a macrotask would starve.
        for (let turn = 0; turn < 3; turn++) await Promise.resolve();
      }
      stop = true;
      await reader;
      assert.ok(observations >= 10);
    });

    test('a write whose index function throws leaves the store unchanged', () => {
      const store = create({
        indexers: {
          picky: (p) => {
            if (p.metadata?.name === 'bad') throw new Error('cannot index');
            return [p.metadata?.name ?? ''];
          },
        },
      });
      store.replace([pod('d', 'a')], '1');
      assert.throws(() => store.replace([pod('d', 'b'), pod('d', 'bad')], '2'), /cannot index/);
      assert.throws(() => store.add(pod('d', 'bad')), /cannot index/);
      assert.deepEqual(store.keys(), ['d/a']);
      assert.deepEqual(store.listIndexValues('picky'), ['a']);
      assert.equal(store.resourceVersion, '1');
    });

    test('stored objects throw on mutation when freezing is on', () => {
      const store = create({ freeze: 'always' });
      store.add(pod('d', 'a'));
      const cached = store.get(key('d', 'a'));
      assert.ok(cached);
      assert.throws(() => {
        (cached as Pod).metadata = {};
      }, TypeError);
      assert.throws(() => {
        (cached.metadata?.labels as Record<string, string>).app = 'changed';
      }, TypeError);
      assert.throws(() => {
        (cached.spec?.containers as unknown[]).push({});
      }, TypeError);
      assert.equal(store.list()[0]?.metadata?.labels?.app, 'web');
    });

    test('stored objects are left mutable when freezing is off', () => {
      const store = create({ freeze: 'never' });
      store.add(pod('d', 'a'));
      assert.equal(Object.isFrozen(store.get(key('d', 'a'))), false);
    });

    test('the transform is applied before an object is keyed, indexed and stored', () => {
      const store = create({
        transform: (p) => ({ ...p, metadata: { ...p.metadata, labels: { app: 'rewritten' } } }),
        indexers: byApp,
      });
      store.add(pod('d', 'a', { app: 'web' }));
      store.replace([pod('d', 'b', { app: 'web' })], '2');
      assert.equal(store.get(key('d', 'b'))?.metadata?.labels?.app, 'rewritten');
      assert.deepEqual(store.listIndexValues('app'), ['rewritten']);
    });

    test('dropManagedFields works as a one-line transform option', () => {
      const store = create({ transform: dropManagedFields });
      const withFields = pod('d', 'a');
      withFields.metadata = {
        ...withFields.metadata,
        managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
      };
      store.add(withFields);
      const cached = store.get(key('d', 'a'));
      assert.equal(cached?.metadata?.managedFields, undefined);
      assert.equal(cached?.metadata?.name, 'a');
    });

    test('the store is synced after the first replace, and waitForSync resolves then', async () => {
      const store = create({});
      assert.equal(store.hasSynced, false);
      let resolved = false;
      const waiting = store.waitForSync().then(() => (resolved = true));
      store.add(pod('d', 'a'));
      await flushMicrotasks();
      assert.equal(resolved, false);
      assert.equal(store.hasSynced, false);
      store.replace([], '1');
      await waiting;
      assert.equal(store.hasSynced, true);
      await store.waitForSync();
    });

    test('waitForSync rejects with the abort reason when its signal aborts first', async () => {
      const store = create({});
      const controller = new AbortController();
      const waiting = store.waitForSync(controller.signal);
      controller.abort(new Error('stopping'));
      await assert.rejects(waiting, /stopping/);
      await assert.rejects(store.waitForSync(controller.signal), /stopping/);
      store.replace([], '1');
      assert.equal(store.hasSynced, true);
    });
  });
}
