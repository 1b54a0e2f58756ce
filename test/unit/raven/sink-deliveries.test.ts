/**
 * The daemon's sinks at work (`sink-deliveries.ts`, `overflow-recovery.ts`), on the fake clock with
 * scripted sinks: a delivery queue per configured sink with that sink's `delivery:` settings, the
 * resync of a sink that overflowed as soon as its deliveries in flight finished (no timer, the
 * clock never moves), and the drain, which leaves no timer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../src/client/kube-object.js';
import { SinkError } from '../../../src/errors/raven-error.js';
import type { ChangeEvent } from '../../../src/raven/model/change-event.js';
import { toChangeEvent } from '../../../src/raven/model/to-change-event.js';
import { parseRavenConfig } from '../../../src/raven/config/load-raven-config.js';
import type { RavenConfig } from '../../../src/raven/config/raven-config-schema.js';
import { MemoryCheckpointStore } from '../../../src/raven/checkpoint/memory-checkpoint-store.js';
import type { RoutedRecord } from '../../../src/raven/delivery/sink-delivery.js';
import { WatcherSinks, type WatchedObjects } from '../../../src/raven/delivery/watcher-sinks.js';
import { RavenMetrics } from '../../../src/raven/metrics/metrics.js';
import { Router } from '../../../src/raven/routing/router.js';
import { SinkDeliveries } from '../../../src/raven/delivery/sink-deliveries.js';
import { FakeClock, flushMicrotasks } from '../../../src/testing/fake-clock.js';
import { silentLogger } from '../../../src/util/logger.js';
import { stoppedStatus } from '../../../src/watch/watcher-events.js';
import { captureLogger } from '../openstack/helpers.js';
import { ScriptedSink } from './delivery/scripted-sink.js';
import { sampleEvent } from './sinks/fixtures.js';

const config = parseRavenConfig(`watchers:
  - { name: deploys, resource: deployments.apps }
sinks:
  - { name: slow, type: stdout, delivery: { maxBacklog: 2, concurrency: 1 } }
  - { name: fast, type: stdout }
`);

function setup() {
  const clock = new FakeClock();
  const logger = captureLogger();
  const sinks = new Map<string, ScriptedSink>();
  const deliveries = new SinkDeliveries(config.sinks, {
    clock,
    logger,
    metrics: new RavenMetrics(() => new Map()),
    watchersOf: () => ['deploys', 'pods'],
    build: (c) => {
      const sink = new ScriptedSink(c.name, () => clock.now());
      sinks.set(c.name, sink);
      return sink;
    },
  });
  return { clock, logger, sinks, deliveries };
}

const CMS = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };

function cm(name: string, rv: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'shop', uid: `uid-${name}`, resourceVersion: rv },
    data: { v: rv },
  } as KubeObject;
}

const ev = (name: string, seq = 1): ChangeEvent =>
  sampleEvent({ name, id: `${name}#${seq}`, resourceVersion: String(seq) });

test('a delivery queue per configured sink, in config order, with its delivery settings', async () => {
  const { sinks, deliveries } = setup();
  assert.deepEqual([...deliveries.byName.keys()], ['slow', 'fast']);
  const slow = deliveries.byName.get('slow');
  assert.ok(slow !== undefined);
  // maxBacklog 2 (the event in flight included), one at a time: the third event overflows.
  for (const name of ['a', 'b']) assert.equal(slow.enqueue(ev(name)), true);
  await flushMicrotasks();
  assert.equal(sinks.get('slow')?.calls.length, 1, 'concurrency 1');
  assert.equal(slow.enqueue(ev('c')), false);
  assert.equal(slow.state, 'overflowed');
  // The other sink has the defaults: it takes many at once.
  const fast = deliveries.byName.get('fast');
  for (const name of ['a', 'b', 'c', 'd']) assert.equal(fast?.enqueue(ev(name)), true);
  await flushMicrotasks();
  assert.equal(sinks.get('fast')?.calls.length, 4);
  for (const sink of sinks.values()) sink.auto = (_, call) => call.succeed();
  for (const sink of sinks.values()) for (const call of sink.calls) if (!call.settled) call.succeed();
  assert.equal(await deliveries.close(1_000), 2);
});

test('an overflowed sink is resynced once its deliveries in flight finish, with no timer', async () => {
  const { clock, logger, sinks, deliveries } = setup();
  const asked: string[] = [];
  const catchUp: RoutedRecord[] = [{ record: ev('b', 9) }, { record: ev('c', 9) }];
  deliveries.recover('deploys', {
    resync: (sink, since) => {
      asked.push(`deploys ${sink} ${String(since)}`);
      return catchUp;
    },
  });
  deliveries.recover('pods', {
    resync: (sink) => {
      asked.push(`pods ${sink}`);
      return [];
    },
  });
  const slow = deliveries.byName.get('slow');
  const sink = sinks.get('slow');
  assert.ok(slow !== undefined && sink !== undefined);
  await clock.tick(1_000);
  const overflowedAt = clock.now();
  for (const name of ['a', 'b', 'c', 'd']) slow.enqueue(ev(name));
  await flushMicrotasks();
  assert.equal(slow.state, 'overflowed');
  assert.ok(logger.records.some((r) => r.msg?.includes('sink fell behind its backlog limit') === true));
  assert.deepEqual(asked, [], 'not while a delivery is in flight: it may still confirm its object');
  assert.equal(clock.pending, 0, 'no timer waits for it');

  sink.auto = (_, call) => call.succeed();
  sink.inFlight()[0]?.succeed();
  await flushMicrotasks();
  assert.deepEqual(
    asked,
    [`deploys slow ${overflowedAt}`, 'pods slow'],
    'at once, in the order of watchers routed to the sink, with the time it overflowed',
  );
  assert.equal(slow.state, 'running');
  assert.deepEqual(
    sink.calls.map((c) => c.event.id),
    ['a#1', 'b#9', 'c#9'],
    'the event in flight, then the catch-up',
  );
  assert.ok(logger.records.some((r) => r.msg === 'resyncing sink from its checkpoint'));
  assert.equal(deliveries.byName.get('fast')?.state, 'running', 'the other sink was never asked about');
  await deliveries.close(1_000);
  assert.equal(clock.pending, 0, 'the drain leaves no timer');
});

test('an overflowed sink with nothing in flight is resynced at once, after the enqueue that overflowed', async () => {
  const { clock, sinks, deliveries } = setup();
  const slow = deliveries.byName.get('slow');
  const sink = sinks.get('slow');
  assert.ok(slow !== undefined && sink !== undefined);
  let during: string | undefined;
  deliveries.recover('deploys', {
    resync: () => {
      during ??= slow.state;
      return [{ record: ev('c', 9) }];
    },
  });
  // Both first attempts fail and wait to retry: nothing is in flight when the third event comes.
  sink.auto = (_, call) => call.fail(new SinkError('unavailable', { retryable: true }));
  slow.enqueue(ev('a'));
  slow.enqueue(ev('b'));
  await flushMicrotasks();
  assert.equal(sink.inFlight().length, 0);
  assert.equal(clock.pending, 2, 'two retries are waiting');
  sink.auto = (_, call) => call.succeed();
  assert.equal(slow.enqueue(ev('c')), false);
  assert.equal(slow.state, 'overflowed', 'not resynced inside the enqueue');
  assert.equal(during, undefined);
  await flushMicrotasks();
  assert.equal(during, 'overflowed');
  assert.equal(slow.state, 'running');
  assert.deepEqual(
    sink.calls.map((c) => c.event.id),
    ['a#1', 'b#1', 'c#9'],
  );
  assert.equal(clock.pending, 0, 'the dropped retries left no timer');
  await deliveries.close(1_000);
});

test('an overflow is recovered from the checkpoint with nothing lost or repeated, before any timer', async () => {
  const config = parseRavenConfig(`watchers:
  - { name: cms, resource: configmaps, namespaces: [shop] }
sinks:
  - { name: b, type: stdout, gapNotices: true, delivery: { maxBacklog: 3, concurrency: 1 } }
`);
  const clock = new FakeClock();
  const checkpoints = new MemoryCheckpointStore();
  const router = new Router(config);
  const metrics = new RavenMetrics(() => new Map());
  let sink: ScriptedSink | undefined;
  const deliveries = new SinkDeliveries(config.sinks, {
    clock,
    logger: silentLogger,
    metrics,
    watchersOf: (name) => router.watchersOf(name),
    build: (c) => (sink = new ScriptedSink(c.name, () => clock.now())),
  });
  assert.ok(sink !== undefined);
  const objects = new Map<string, KubeObject>();
  let resourceVersion: string | undefined;
  const watched: WatchedObjects = {
    config: config.watchers[0] as RavenConfig['watchers'][number],
    resource: CMS,
    synced: true,
    objects: () => [...objects.values()],
    objectsIn: () => [...objects.values()],
    status: () => ({ ...stoppedStatus(), resourceVersion }),
  };
  const watcherSinks = new WatcherSinks(
    {
      router,
      deliveries: deliveries.byName,
      checkpoints,
      metrics,
      logger: silentLogger,
      clock,
      diffIgnore: [],
      gapNotices: new Set(['b']),
    },
    watched,
  );
  deliveries.recover('cms', watcherSinks);
  const change = (name: string, rv: string): void => {
    const object = cm(name, rv);
    const previous = objects.get(name);
    objects.set(name, object);
    resourceVersion = rv;
    const event = toChangeEvent(
      { watcher: 'cms', resource: CMS, time: new Date(clock.now()).toISOString() },
      { type: previous === undefined ? 'added' : 'modified', object, previous, origin: 'live' },
    );
    watcherSinks.change(event, 'shop');
  };
  watcherSinks.start();
  watcherSinks.watching(['shop']);
  watcherSinks.scopeListed('shop', '10');
  watcherSinks.synced([], false);
  // p@11 goes out at once; q@12, q@13, r@14 wait; r@15 is one past the backlog of 3.
  change('p', '11');
  await flushMicrotasks();
  change('q', '12');
  change('q', '13');
  change('r', '14');
  change('r', '15');
  const b = deliveries.byName.get('b');
  assert.equal(b?.state, 'overflowed');
  await flushMicrotasks();
  assert.equal(b.state, 'overflowed', 'p@11 is still in flight: its confirmation decides its catch-up');
  sink.auto = (_, call) => call.succeed();
  sink.inFlight()[0]?.succeed();
  await flushMicrotasks();
  const seen = sink.calls.map(({ event }) =>
    event.type === 'gap'
      ? `gap ${event.reason} ${event.fromResourceVersion ?? '-'}..${event.toResourceVersion ?? '-'}`
      : `${event.type} ${event.name}@${event.resourceVersion ?? '-'}`,
  );
  assert.deepEqual(
    seen,
    ['added p@11', 'added q@13', 'added r@15', 'gap overflow 11..15'],
    'each object once, at its latest state; the coalesced history reported as a gap',
  );
  assert.equal(b.state, 'running');
  assert.equal(
    checkpoints.confirmedVersion('cms')?.resourceVersion,
    '15',
    'what was dropped no longer holds it',
  );
  change('p', '16');
  await flushMicrotasks();
  assert.equal(seen.length + 1, sink.calls.length, 'live changes are taken again');
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '16');
  await deliveries.close(1_000);
  assert.equal(clock.pending, 0, 'no timer was ever needed');
});

test('the drain says what a sink could not deliver before the deadline', async () => {
  const { clock, logger, deliveries } = setup();
  deliveries.byName.get('fast')?.enqueue(ev('stuck'));
  await flushMicrotasks();
  assert.equal(deliveries.backlog, 1);
  const closing = deliveries.close(2_000);
  await clock.tick(2_000);
  assert.equal(await closing, 2);
  const warning = logger.records.find(
    (r) => r.msg?.startsWith('not delivered before the drain deadline') === true,
  );
  assert.ok(warning !== undefined, 'the undelivered event is reported');
  assert.equal(clock.pending, 0);
});
