/**
 * The daemon's diagnostics channels, observed as a subscriber would: a change traced from the
 * delivery queue to its settlement at a scripted sink, on the fake clock; and the channels are
 * silent (and build nothing) when nobody subscribes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ChangeEvent } from '../../../src/raven/model/change-event.js';
import {
  DELIVERY_ENQUEUE,
  DELIVERY_SETTLE,
  ROUTER_VERDICT,
  WATCHER_CHANGE,
  WATCHER_GAP,
  type DeliveryEnqueueMessage,
  type DeliverySettleMessage,
  reportSubscriberErrorsTo,
} from '../../../src/raven/model/diagnostics.js';
import { stderrLogger } from '../../../src/util/logger.js';
import { SinkError } from '../../../src/errors/raven-error.js';
import { SinkDelivery } from '../../../src/raven/delivery/sink-delivery.js';
import { toChangeEvent } from '../../../src/raven/model/to-change-event.js';
import { FakeClock, flushMicrotasks } from '../../../src/testing/fake-clock.js';
import { ScriptedSink } from './delivery/scripted-sink.js';

const CMS = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };

function event(name: string, rv: string): ChangeEvent {
  return toChangeEvent(
    { watcher: 'cms', resource: CMS, time: '2026-01-01T00:00:00.000Z' },
    {
      type: 'added',
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: 'shop', resourceVersion: rv },
      },
      origin: 'live',
    },
  );
}

function record<T>(name: string, seen: T[] = []): { seen: T[]; stop: () => void } {
  const listener = (message: unknown): void => {
    seen.push(message as T);
  };
  subscribe(name, listener);
  return { seen, stop: () => unsubscribe(name, listener) };
}

test('a record is traced from the queue to its settlement, retries and silent ones included', async () => {
  const clock = new FakeClock();
  const sink = new ScriptedSink('out', () => clock.now());
  let calls = 0;
  sink.auto = (_e, call) => {
    calls++;
    if (calls === 1) call.fail(new SinkError('busy', { retryable: true }));
    else call.succeed();
  };
  const delivery = new SinkDelivery(sink, { clock, random: () => 0, initialBackoffMs: 100 });
  const enqueued = record<DeliveryEnqueueMessage>(DELIVERY_ENQUEUE);
  const settled = record<DeliverySettleMessage>(DELIVERY_SETTLE);
  try {
    const first = event('a', '1');
    const filtered = event('b', '2');
    delivery.enqueue(first);
    delivery.enqueue(filtered, { verdict: 'silent' });
    await flushMicrotasks();
    await clock.tick(100);
    await flushMicrotasks();
    assert.deepEqual(
      enqueued.seen.map((m) => [m.sink, m.record.id, m.verdict, m.queued]),
      [
        ['out', first.id, 'deliver', true],
        ['out', filtered.id, 'silent', true],
      ],
    );
    assert.deepEqual(
      settled.seen.map((m) => [m.sink, m.record.id, m.how, m.attempts]),
      [
        ['out', filtered.id, 'silent', 0],
        ['out', first.id, 'delivered', 2],
      ],
    );
  } finally {
    enqueued.stop();
    settled.stop();
    await delivery.close(0);
  }
});

test('a record the delivery does not take is published as not queued', async () => {
  const clock = new FakeClock();
  const delivery = new SinkDelivery(new ScriptedSink('out', () => clock.now()), { clock });
  await delivery.close(0);
  const enqueued = record<DeliveryEnqueueMessage>(DELIVERY_ENQUEUE);
  try {
    delivery.enqueue(event('a', '1'));
  } finally {
    enqueued.stop();
  }
  assert.deepEqual(
    enqueued.seen.map((m) => m.queued),
    [false],
  );
});

test('every channel is named raven:<area>:<event> and has no subscriber by default', () => {
  for (const name of [WATCHER_CHANGE, ROUTER_VERDICT, DELIVERY_ENQUEUE, DELIVERY_SETTLE, WATCHER_GAP]) {
    assert.match(name, /^raven:[a-z]+:[a-z]+$/);
    assert.equal(channel(name).hasSubscribers, false, name);
  }
});

test('a subscriber that throws does not stop the step: it is logged once, and the others still hear', async () => {
  const clock = new FakeClock();
  const lines: { fields: object; msg: string | undefined }[] = [];
  const capture = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (fields: object, msg?: string) => lines.push({ fields, msg }),
    child: () => capture,
  };
  reportSubscriberErrorsTo(capture);
  const heard: string[] = [];
  const throwing = (): void => {
    throw new Error('a bug in the subscriber');
  };
  const listening = (message: unknown): void => {
    heard.push((message as DeliverySettleMessage).record.id);
  };
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown): void => {
    uncaught.push(err);
  };
  process.on('uncaughtException', onUncaught);
  subscribe(DELIVERY_SETTLE, throwing);
  subscribe(DELIVERY_SETTLE, listening);
  try {
    const sink = new ScriptedSink('audit', () => clock.now());
    sink.auto = (_e, call) => call.succeed();
    const delivery = new SinkDelivery(sink, { clock });
    const records = [event('a', '1'), event('b', '2')];
    for (const r of records) delivery.enqueue(r);
    await flushMicrotasks();
    await delivery.close(0);
    // Node would rethrow a subscriber's error on the next tick: give it one
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(sink.names(), ['a', 'b'], 'the step went on: both were delivered');
    assert.deepEqual(
      heard,
      records.map((r) => r.id),
      'the subscriber after the throwing one heard both',
    );
    assert.equal(lines.length, 1, 'one line for the throwing subscriber, not one per message');
    assert.match(lines[0]?.msg ?? '', /subscriber threw; the step went on/);
    assert.deepEqual(uncaught, []);
  } finally {
    unsubscribe(DELIVERY_SETTLE, throwing);
    unsubscribe(DELIVERY_SETTLE, listening);
    process.off('uncaughtException', onUncaught);
    reportSubscriberErrorsTo(stderrLogger);
  }
  assert.equal(
    channel(DELIVERY_SETTLE).hasSubscribers,
    false,
    'both unsubscribed through their own functions',
  );
});
