import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Controller } from '../../../src/controller/controller.js';
import { Informer } from '../../../src/informer/informer.js';
import { FeedSource } from '../informer/feed-source.js';
import { failed, requeueAfter } from '../../../src/queue/handler-result.js';
import type { KubeObject } from '../../../src/client/kube-object.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { makeObjectKey } from '../../../src/client/object-key.js';
import type { WatcherEvent } from '../../../src/watch/watcher-events.js';

const obj = (name: string, rv: string, owner?: string): KubeObject => ({
  metadata: {
    name,
    namespace: 'ns',
    resourceVersion: rv,
    uid: `uid-${name}`,
    ...(owner === undefined
      ? {}
      : { ownerReferences: [{ apiVersion: 'v1', kind: 'ReplicationController', name: owner, uid: 'x' }] }),
  },
});

const synced = (...objects: KubeObject[]): WatcherEvent[] => [
  { type: 'listing', relist: false },
  ...objects.map((object) => ({ type: 'initial' as const, object })),
  { type: 'synced', resourceVersion: '1', relist: false },
];

function setup(reconcile: (key: string) => Promise<ReturnType<typeof requeueAfter> | undefined>) {
  const clock = new FakeClock();
  const primaryFeed = new FeedSource();
  const podFeed = new FeedSource();
  const primary = new Informer<KubeObject>({ source: () => primaryFeed, clock, name: 'rc' });
  const pods = new Informer<KubeObject>({ source: () => podFeed, clock, name: 'pods' });
  const controller = new Controller({
    name: 'test',
    primary,
    owns: [pods],
    ownerKind: 'ReplicationController',
    reconcile: (key) => reconcile(key),
    clock,
  });
  const abort = new AbortController();
  const runs = [primary.run(abort.signal), pods.run(abort.signal), controller.run(abort.signal)];
  return { clock, primaryFeed, podFeed, controller, abort, runs };
}

test('primary and owned changes enqueue the primary key; a key waiting twice is reconciled once', async () => {
  const seen: string[] = [];
  const s = setup(async (key) => {
    await Promise.resolve();
    seen.push(key);
    return undefined;
  });
  s.primaryFeed.push(...synced(obj('rc1', '1')));
  s.podFeed.push(...synced(obj('p1', '1', 'rc1'), obj('p2', '1', 'rc1'), obj('orphan', '1')));
  await s.clock.tick(100);
  assert.deepEqual(seen, ['ns/rc1'], 'three triggers for rc1 while it waited: one reconcile');
  s.podFeed.push({ type: 'deleted', object: obj('p1', '2', 'rc1'), tombstone: false });
  await s.clock.tick(100);
  assert.deepEqual(seen, ['ns/rc1', 'ns/rc1']);
  assert.equal(s.controller.status().synced, true);
  assert.equal(s.controller.status().healthy, true);
  s.abort.abort();
  await s.clock.tick(100);
  await Promise.all(s.runs);
});

test('a failing reconcile is retried with growing per-key backoff and reported in status', async () => {
  const times: number[] = [];
  const s = setup(async () => {
    await Promise.resolve();
    times.push(s.clock.now());
    return times.length < 5 ? failed(new Error('neutron says no')) : undefined;
  });
  s.primaryFeed.push(...synced(obj('rc1', '1')));
  s.podFeed.push(...synced());
  await s.clock.tick(1_000);
  assert.equal(times.length, 5);
  const gaps = times.slice(1).map((t, i) => t - (times[i] ?? 0));
  assert.deepEqual(gaps, [5, 10, 20, 40]);
  const status = s.controller.status();
  assert.equal(status.failures, 4);
  assert.match(status.lastError?.message ?? '', /neutron says no/);
  s.abort.abort();
  await s.clock.tick(100);
  await Promise.all(s.runs);
});

test('requeue after a delay reconciles the key again at that time', async () => {
  const times: number[] = [];
  const s = setup(async () => {
    await Promise.resolve();
    times.push(s.clock.now());
    return times.length === 1 ? requeueAfter(30_000) : undefined;
  });
  s.primaryFeed.push(...synced(obj('rc1', '1')));
  s.podFeed.push(...synced());
  await s.clock.tick(29_000);
  assert.equal(times.length, 1);
  await s.clock.tick(2_000);
  assert.equal(times.length, 2);
  assert.equal((times[1] ?? 0) - (times[0] ?? 0), 30_000);
  s.abort.abort();
  await s.clock.tick(100);
  await Promise.all(s.runs);
});

test('a controller over an informer that was never started rejects with ERR_NOT_STARTED naming it', async () => {
  const clock = new FakeClock();
  const feed = new FeedSource();
  const primary = new Informer<KubeObject>({ source: () => feed, clock, name: 'replicationcontrollers' });
  const pods = new Informer<KubeObject>({ source: () => new FeedSource(), clock, name: 'pods' });
  const abort = new AbortController();
  const controller = new Controller({
    name: 'keeper',
    primary,
    owns: [pods],
    ownerKind: 'ReplicationController',
    reconcile: () => Promise.resolve(undefined),
    clock,
  });
  const running = primary.run(abort.signal);
  await assert.rejects(controller.run(abort.signal), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'ERR_NOT_STARTED');
    assert.match(err.message, /controller keeper: the informer pods was never started/);
    assert.match(err.message, /informers\.start\(signal\).*before controller\.run\(signal\)/);
    return true;
  });
  assert.equal(controller.status().healthy, false);
  abort.abort();
  await running;
});

test('informers started in the same turn as controller.run are started in time', async () => {
  const clock = new FakeClock();
  const feed = new FeedSource();
  const primary = new Informer<KubeObject>({ source: () => feed, clock, name: 'rc' });
  const seen: string[] = [];
  const controller = new Controller({
    name: 'late-start',
    primary,
    reconcile: (key) => {
      seen.push(key);
      return Promise.resolve(undefined);
    },
    clock,
  });
  const abort = new AbortController();
  const run = controller.run(abort.signal);
  const informer = primary.run(abort.signal);
  feed.push(...synced(obj('rc1', '1')));
  await clock.tick(100);
  assert.deepEqual(seen, ['ns/rc1']);
  abort.abort();
  await clock.tick(100);
  await Promise.all([run, informer]);
});

test('without a logger, a reconcile that throws is reported on stderr once per key and message, not at every retry', async (t) => {
  const written: string[] = [];
  t.mock.method(process.stderr, 'write', (chunk: string) => written.push(chunk));
  // Throws a TypeError three times, then another error twice, then succeeds, then throws again.
  const plan = ['type', 'type', 'type', 'other', 'other', 'ok', 'type'];
  let calls = 0;
  const s = setup(async () => {
    await Promise.resolve();
    const step = plan[calls++];
    if (step === 'type') throw new TypeError("Cannot read properties of undefined (reading 'spec')");
    if (step === 'other') throw new Error('neutron says no');
    if (step === 'ok') s.controller.enqueue(makeObjectKey('rc1', 'ns'));
    return undefined;
  });
  s.primaryFeed.push(...synced(obj('rc1', '1')));
  s.podFeed.push(...synced());
  await s.clock.tick(1_000);
  s.abort.abort();
  await s.clock.tick(100);
  await Promise.all(s.runs);
  t.mock.restoreAll();
  assert.equal(calls, plan.length + 1, 'the last throw is retried too');
  const reports = written.join('').split(/^(?=raven )/m);
  assert.equal(reports.length, 3, written.join(''));
  const head =
    /^raven error: reconcile threw; retrying with backoff \(said again if it throws something else\) \(controller=test, key=ns\/rc1\)\n/;
  for (const report of reports) assert.match(report, head);
  assert.match(
    reports[0] ?? '',
    /\n {2}TypeError: Cannot read properties of undefined \(reading 'spec'\)\n  +at /,
  );
  assert.match(reports[1] ?? '', /\n {2}Error: neutron says no\n/);
  assert.match(
    reports[2] ?? '',
    /\n {2}TypeError: Cannot read properties/,
    'after a success, a throw is news again',
  );
});

test('with a logger, every throwing reconcile goes there and nothing to stderr', async (t) => {
  const written: string[] = [];
  t.mock.method(process.stderr, 'write', (chunk: string) => written.push(chunk));
  const records: string[] = [];
  const logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (_fields: object, msg?: string) => void records.push(msg ?? ''),
    child: () => logger,
  };
  const clock = new FakeClock();
  const feed = new FeedSource();
  const primary = new Informer<KubeObject>({ source: () => feed, clock, name: 'rc' });
  let calls = 0;
  const controller = new Controller({
    name: 'logged',
    primary,
    reconcile: () => {
      calls++;
      return calls < 3 ? Promise.reject(new Error('boom')) : Promise.resolve(undefined);
    },
    clock,
    logger,
  });
  const abort = new AbortController();
  const runs = [primary.run(abort.signal), controller.run(abort.signal)];
  feed.push(...synced(obj('rc1', '1')));
  await clock.tick(1_000);
  abort.abort();
  await clock.tick(100);
  await Promise.all(runs);
  t.mock.restoreAll();
  assert.equal(calls, 3);
  assert.deepEqual(records, [
    'work handler threw; retrying with backoff',
    'work handler threw; retrying with backoff',
  ]);
  assert.deepEqual(written, []);
});
