/**
 * The daemon's sinks at work (`sink-deliveries.ts`), on the fake clock with scripted sinks: a
 * delivery queue per configured sink with that sink's `delivery:` settings, the resync of a sink
 * that overflowed at the next check (and not before), and the drain, which leaves no timer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChangeEvent } from '../../../src/raven/model/change-event.js';
import { parseRavenConfig } from '../../../src/raven/config/index.js';
import type { RoutedRecord } from '../../../src/raven/delivery/sink-delivery.js';
import { RavenMetrics } from '../../../src/raven/metrics/metrics.js';
import { RESYNC_CHECK_MS, SinkDeliveries } from '../../../src/raven/delivery/sink-deliveries.js';
import { FakeClock, flushMicrotasks } from '../../../src/testing/fake-clock.js';
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
    build: (c) => {
      const sink = new ScriptedSink(c.name, () => clock.now());
      sinks.set(c.name, sink);
      return sink;
    },
  });
  return { clock, logger, sinks, deliveries };
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

test('an overflowed sink is resynced at the next check, from the time it overflowed', async () => {
  const { clock, logger, sinks, deliveries } = setup();
  const asked: [string, number | undefined][] = [];
  const catchUp: RoutedRecord[] = [{ record: ev('b', 9) }, { record: ev('c', 9) }];
  deliveries.watchOverflows((sink, since) => {
    asked.push([sink, since]);
    return sink === 'slow' ? catchUp : [];
  });
  const slow = deliveries.byName.get('slow');
  assert.ok(slow !== undefined);
  await clock.tick(1_000);
  const overflowedAt = clock.now();
  for (const name of ['a', 'b', 'c', 'd']) slow.enqueue(ev(name));
  await flushMicrotasks();
  assert.equal(slow.state, 'overflowed');
  assert.ok(logger.records.some((r) => r.msg?.includes('sink fell behind its backlog limit') === true));

  await clock.tick(RESYNC_CHECK_MS - 1_001);
  assert.deepEqual(asked, [], 'not before the check');
  await clock.tick(1);
  assert.deepEqual(asked, [['slow', overflowedAt]], 'only the overflowed sink, with the time it overflowed');
  assert.equal(slow.state, 'running');
  const sink = sinks.get('slow');
  assert.ok(sink !== undefined);
  sink.auto = (_, call) => call.succeed();
  for (const call of sink.calls) if (!call.settled) call.succeed();
  await flushMicrotasks();
  await flushMicrotasks();
  assert.deepEqual(
    sink.calls.map((c) => c.event.id),
    ['a#1', 'b#9', 'c#9'],
    'the event in flight, then the catch-up',
  );

  // Checks go on while running; nothing is asked of a sink that has not overflowed.
  await clock.tick(RESYNC_CHECK_MS);
  assert.equal(asked.length, 1);
  await deliveries.close(1_000);
  assert.equal(clock.pending, 0, 'the drain leaves no timer');
});

test('the drain says what a sink could not deliver before the deadline', async () => {
  const { clock, logger, deliveries } = setup();
  deliveries.watchOverflows(() => []);
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
