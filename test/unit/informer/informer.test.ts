import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Informer } from '../../../src/informer/informer.js';
import { FeedSource } from './feed-source.js';
import { reflect } from '../../../src/informer/reflector.js';
import { MemoryStore } from '../../../src/cache/memory-store.js';
import { makeObjectKey } from '../../../src/client/object-key.js';
import { FakeClock, flushMicrotasks } from '../../../src/testing/fake-clock.js';
import type { KubeObject } from '../../../src/client/kube-object.js';
import type { WatcherEvent } from '../../../src/watch/watcher-events.js';

interface Pod extends KubeObject {
  spec?: { nodeName?: string };
}

const pod = (name: string, rv: string, node = 'n1'): Pod => ({
  metadata: { name, namespace: 'ns', resourceVersion: rv, uid: `uid-${name}` },
  spec: { nodeName: node },
});

/** A source fed by the test: push events, then end it. */

const initialList = (...pods: Pod[]): WatcherEvent<Pod>[] => [
  { type: 'listing', relist: false },
  ...pods.map((object) => ({ type: 'initial' as const, object })),
  { type: 'synced', resourceVersion: '10', relist: false },
];

function setup(clock = new FakeClock()): {
  informer: Informer<Pod>;
  feed: FeedSource;
  controller: AbortController;
  running: Promise<void>;
} {
  const feed = new FeedSource<Pod>();
  const informer = new Informer<Pod>({
    source: () => feed,
    clock,
    indexers: { byNode: (p) => (p.spec?.nodeName === undefined ? [] : [p.spec.nodeName]) },
  });
  const controller = new AbortController();
  const running = informer.run(controller.signal);
  return { informer, feed, controller, running };
}

test('handlers hear add, update with the old object, and delete with the tombstone flag, after the store has them', async () => {
  const { informer, feed, controller, running } = setup();
  const calls: string[] = [];
  informer.addEventHandler({
    add: (p) => {
      assert.ok(
        informer.store.get(makeObjectKey(p.metadata?.name ?? '', 'ns')),
        'the store already holds the added object',
      );
      calls.push(`add ${p.metadata?.name ?? ''}`);
    },
    update: (old, now) =>
      void calls.push(
        `update ${old.metadata?.resourceVersion ?? ''}->${now.metadata?.resourceVersion ?? ''}`,
      ),
    delete: (p, { tombstone }) => void calls.push(`delete ${p.metadata?.name ?? ''} ${tombstone}`),
  });
  feed.push(...initialList(pod('a', '1')));
  feed.push({ type: 'modified', object: pod('a', '2'), previous: pod('a', '1') });
  feed.push({ type: 'added', object: pod('b', '3') });
  feed.push({ type: 'deleted', object: pod('b', '4'), tombstone: false });
  await flushMicrotasks();
  await informer.idle();
  assert.deepEqual(calls, ['add a', 'update 1->2', 'add b', 'delete b false']);
  assert.equal(informer.hasSynced, true);
  assert.deepEqual(
    informer.store.byIndex('byNode', 'n1').map((p) => p.metadata?.name),
    ['a'],
  );
  controller.abort();
  await running;
});

test('a delete handler gets the final state the DELETED event carried, and the cached state before it', async () => {
  const { informer, feed, controller, running } = setup();
  const calls: string[] = [];
  informer.addEventHandler({
    delete: (p, { tombstone, previous }) =>
      void calls.push(
        `${p.metadata?.name ?? ''}@${p.metadata?.resourceVersion ?? ''} was ${previous?.metadata?.resourceVersion ?? '-'}` +
          ` final=${String(p.metadata?.deletionTimestamp)} ${tombstone ? 'tombstone' : 'live'}`,
      ),
  });
  feed.push(...initialList(pod('a', '4'), pod('b', '5')));
  const final: Pod = { ...pod('a', '6'), metadata: { ...pod('a', '6').metadata, deletionTimestamp: 'T' } };
  feed.push({ type: 'deleted', object: final, tombstone: false });
  // A relist's tombstone: the watcher may know only a stub; the cache's last state is what is told.
  feed.push({ type: 'deleted', object: { metadata: { name: 'b', namespace: 'ns' } }, tombstone: true });
  await flushMicrotasks();
  await informer.idle();
  assert.deepEqual(calls, ['a@6 was 4 final=T live', 'b@5 was 5 final=undefined tombstone']);
  controller.abort();
  await running;
});

test('a relist is applied at once: a reader never sees half of it', async () => {
  const { informer, feed, controller, running } = setup();
  feed.push(...initialList(pod('a', '1'), pod('b', '2'), pod('c', '3')));
  await flushMicrotasks();
  const sizes: number[] = [];
  informer.addEventHandler({
    delete: () => void sizes.push(informer.store.size),
    add: () => void sizes.push(informer.store.size),
  });
  await informer.idle();
  sizes.length = 0;
  feed.push({ type: 'listing', relist: true });
  feed.push({ type: 'deleted', object: pod('a', '1'), tombstone: true });
  await flushMicrotasks();
  assert.equal(informer.store.size, 3, 'nothing of the relist is visible before it completes');
  feed.push({ type: 'deleted', object: pod('b', '2'), tombstone: true });
  feed.push({ type: 'added', object: pod('d', '9') });
  await flushMicrotasks();
  assert.equal(informer.store.size, 3);
  feed.push({ type: 'synced', resourceVersion: '20', relist: true });
  await flushMicrotasks();
  await informer.idle();
  assert.deepEqual(informer.store.keys().sort(), ['ns/c', 'ns/d']);
  assert.deepEqual(sizes, [2, 2, 2], 'handlers ran after the whole relist was in the store');
  controller.abort();
  await running;
});

test('a throwing or rejecting handler is counted, isolated and reported on stderr; the others and the stream go on', async (t) => {
  const written: string[] = [];
  t.mock.method(process.stderr, 'write', (chunk: string) => written.push(chunk));
  const { informer, feed, controller, running } = setup();
  const good: string[] = [];
  const bad = informer.addEventHandler({
    add: async (p) => {
      if (p.metadata?.name === 'a') throw new Error('sync throw');
      await Promise.reject(new Error('async reject'));
    },
  });
  informer.addEventHandler({ add: (p) => void good.push(p.metadata?.name ?? '') });
  feed.push(...initialList(pod('a', '1'), pod('b', '2')));
  feed.push({ type: 'added', object: pod('c', '3') });
  await flushMicrotasks();
  await informer.idle();
  assert.deepEqual(good, ['a', 'b', 'c']);
  assert.equal(bad.failures, 3);
  assert.equal(informer.status().handlerFailures, 3);
  t.mock.restoreAll();
  const reports = written.join('').split(/^(?=raven )/m);
  assert.equal(reports.length, 3, written.join(''));
  assert.match(
    reports[0] ?? '',
    /^raven error: the add handler failed; the informer goes on \(informer=informer, event=add\)\n {2}Error: sync throw\n  +at /,
  );
  assert.match(reports[1] ?? '', /^raven error: the add handler failed.*\n {2}Error: async reject\n/);
  controller.abort();
  await running;
});

test('with a logger, a failed handler is reported there with the error, not on stderr', async (t) => {
  const written: string[] = [];
  t.mock.method(process.stderr, 'write', (chunk: string) => written.push(chunk));
  const records: { fields: Record<string, unknown>; msg: string | undefined }[] = [];
  const logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (fields: object, msg?: string) =>
      void records.push({ fields: fields as Record<string, unknown>, msg }),
    child: () => logger,
  };
  const feed = new FeedSource<Pod>();
  const informer = new Informer<Pod>({ source: () => feed, logger });
  const controller = new AbortController();
  const running = informer.run(controller.signal);
  const failure = new TypeError('x is undefined');
  informer.addEventHandler({
    add: () => {
      throw failure;
    },
  });
  feed.push(...initialList(pod('a', '1')));
  await flushMicrotasks();
  await informer.idle();
  t.mock.restoreAll();
  assert.deepEqual(records, [
    { fields: { err: failure, event: 'add' }, msg: 'the add handler failed; the informer goes on' },
  ]);
  assert.deepEqual(written, []);
  controller.abort();
  await running;
});

test('a handler added after sync first receives every cached object, then live changes', async () => {
  const { informer, feed, controller, running } = setup();
  feed.push(...initialList(pod('a', '1'), pod('b', '2')));
  await flushMicrotasks();
  await informer.waitForSync();
  const calls: string[] = [];
  const reg = informer.addEventHandler({ add: (p) => void calls.push(`add ${p.metadata?.name ?? ''}`) });
  await reg.synced();
  assert.deepEqual(calls.sort(), ['add a', 'add b']);
  feed.push({ type: 'added', object: pod('c', '3') });
  await flushMicrotasks();
  await informer.idle();
  assert.deepEqual(calls.slice(2), ['add c']);
  controller.abort();
  await running;
});

test('resync re-delivers every cached object as an update marked resync, on the clock', async () => {
  const clock = new FakeClock();
  const { informer, feed, controller, running } = setup(clock);
  const resyncs: string[] = [];
  informer.addEventHandler(
    {
      update: (old, now, { resync }) => {
        if (resync && old === now) resyncs.push(now.metadata?.name ?? '');
      },
    },
    { resyncPeriodMs: 60_000 },
  );
  feed.push(...initialList(pod('a', '1'), pod('b', '2')));
  await clock.tick(59_000);
  await informer.idle();
  assert.deepEqual(resyncs, []);
  await clock.tick(1_000);
  await informer.idle();
  assert.deepEqual(resyncs.sort(), ['a', 'b']);
  await clock.tick(60_000);
  await informer.idle();
  assert.equal(resyncs.length, 4);
  controller.abort();
  await running;
});

test('reflect passes on watcher errors and sync points as values', async () => {
  const store = new MemoryStore<Pod>();
  async function* events(): AsyncGenerator<WatcherEvent<Pod>> {
    await Promise.resolve();
    yield* initialList(pod('a', '1'));
    yield {
      type: 'error',
      error: new Error('reset'),
      status: {
        phase: 'backoff',
        synced: true,
        resourceVersion: '1',
        lastError: undefined,
        lastEventAt: undefined,
        secondsSinceLastEvent: 0,
        relists: 0,
        reconnects: 0,
        failures: 1,
        watchList: false,
        objects: 1,
      },
    };
    yield { type: 'bookmark', resourceVersion: '5' };
  }
  const out: string[] = [];
  for await (const e of reflect(store, events())) out.push(e.type);
  assert.deepEqual(out, ['add', 'synced', 'error']);
  assert.equal(store.hasSynced, true);
});
