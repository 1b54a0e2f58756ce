import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SinkError } from '../../../../src/errors/raven-error.js';
import type { ChangeEvent } from '../../../../src/raven/model/change-event.js';
import type { SinkRecord } from '../../../../src/raven/model/gap-notice.js';
import type { DeadLetterRecord, DeadLetterWriter } from '../../../../src/raven/delivery/dead-letter.js';
import { noopDeliveryMetrics } from '../../../../src/raven/metrics/delivery-metrics.js';
import { SinkDelivery, type SinkDeliveryOptions } from '../../../../src/raven/delivery/sink-delivery.js';
import { SinkHttpError } from '../../../../src/raven/sinks/sink-http-error.js';
import { FakeClock, flushMicrotasks } from '../../../../src/testing/fake-clock.js';
import { sleep } from '../../../../src/util/clock.js';
import type { Logger } from '../../../../src/util/logger.js';
import { sampleEvent } from '../sinks/fixtures.js';
import { ScriptedSink } from './scripted-sink.js';
import { until } from '../../../harness/until.js';

let clock: FakeClock;
let sink: ScriptedSink;
let deadLetters: DeadLetterRecord[];
const memoryDeadLetter: DeadLetterWriter = {
  write: (record) => {
    deadLetters.push(record);
    return Promise.resolve();
  },
};

beforeEach(() => {
  clock = new FakeClock();
  sink = new ScriptedSink('fake', () => clock.now());
  deadLetters = [];
});

function delivery(options: SinkDeliveryOptions = {}): SinkDelivery {
  return new SinkDelivery(sink, { clock, random: () => 0, deadLetter: memoryDeadLetter, ...options });
}

/** Event `seq` of object `name`: distinct ids, same object key. */
function ev(name: string, seq = 1, extra: Partial<ChangeEvent> = {}): ChangeEvent {
  return sampleEvent({ name, id: `${name}#${seq}`, resourceVersion: String(seq), ...extra });
}

/** The object an event is about (`gap` for a gap notice). */
const nameOf = (event: SinkRecord): string => (event.type === 'gap' ? 'gap' : event.name);

const retryable = (): SinkError => new SinkError('receiver unavailable', { retryable: true });

test('enqueue hands events to the sink without waiting for it', async () => {
  const d = delivery();
  assert.equal(d.enqueue(ev('a')), true);
  await flushMicrotasks();
  assert.equal(sink.inFlight().length, 1);
  d.destroy();
});

test('events of one object are delivered one after another, different objects concurrently', async () => {
  const d = delivery({ concurrency: 2 });
  for (const e of [ev('a', 1), ev('a', 2), ev('b', 1), ev('c', 1), ev('a', 3), ev('b', 2)]) d.enqueue(e);
  await flushMicrotasks();
  assert.deepEqual(
    sink.inFlight().map((c) => c.event.id),
    ['a#1', 'b#1'],
    'two objects at a time, never two events of one object',
  );
  const finish = async (id: string): Promise<void> => {
    const call = sink.inFlight().find((c) => c.event.id === id);
    assert.ok(call, `${id} is in flight`);
    call.succeed();
    await flushMicrotasks();
  };
  await finish('b#1');
  assert.deepEqual(
    sink
      .inFlight()
      .map((c) => c.event.id)
      .sort(),
    ['a#1', 'c#1'],
  );
  await finish('a#1');
  // Objects take turns: b's next event was ready before a's.
  assert.deepEqual(
    sink
      .inFlight()
      .map((c) => c.event.id)
      .sort(),
    ['b#2', 'c#1'],
  );
  await finish('c#1');
  assert.deepEqual(
    sink
      .inFlight()
      .map((c) => c.event.id)
      .sort(),
    ['a#2', 'b#2'],
  );
  await finish('a#2');
  await finish('b#2');
  await finish('a#3');
  const order = (name: string): string[] =>
    sink.calls.filter((c) => nameOf(c.event) === name).map((c) => c.event.id);
  assert.deepEqual(order('a'), ['a#1', 'a#2', 'a#3']);
  assert.deepEqual(order('b'), ['b#1', 'b#2']);
  assert.equal(d.backlog, 0);
});

test('per-object order holds under random completion order', async () => {
  const d = delivery({ concurrency: 4 });
  const names = ['a', 'b', 'c', 'd', 'e', 'f'];
  const expected = new Map<string, string[]>();
  for (let seq = 1; seq <= 20; seq++)
    for (const name of names) {
      d.enqueue(ev(name, seq));
      expected.set(name, [...(expected.get(name) ?? []), `${name}#${seq}`]);
    }
  let seed = 7;
  const rand = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  // Each round settles one of the 120 calls: a delivery that kept calling would fail here, not spin.
  for (let round = 1; ; round++) {
    await flushMicrotasks();
    const flying = sink.inFlight();
    if (flying.length === 0) break;
    assert.ok(round <= names.length * 20, `still delivering after ${round - 1} calls settled`);
    assert.ok(flying.length <= 4);
    assert.equal(
      new Set(flying.map((c) => nameOf(c.event))).size,
      flying.length,
      'one event per object in flight',
    );
    flying[Math.floor(rand() * flying.length)]?.succeed();
  }
  for (const name of names)
    assert.deepEqual(
      sink.calls.filter((c) => nameOf(c.event) === name).map((c) => c.event.id),
      expected.get(name),
    );
});

test('a retryable failure is retried with exponential backoff, then dead-lettered, and the object goes on', async () => {
  const deadLettered: string[] = [];
  const d = delivery({ maxAttempts: 4, onDeadLetter: (e) => deadLettered.push(e.id) });
  sink.auto = (event, call) => {
    if (event.id === 'a#1') call.fail(retryable());
    else call.succeed();
  };
  const start = clock.now();
  d.enqueue(ev('a', 1));
  d.enqueue(ev('a', 2));
  await clock.runAll();
  const attempts = sink.calls.filter((c) => c.event.id === 'a#1').map((c) => c.at - start);
  // random() = 0: half of each step of 500, 1000, 2000 ms.
  assert.deepEqual(attempts, [0, 250, 750, 1_750]);
  assert.deepEqual(deadLettered, ['a#1']);
  assert.equal(deadLetters.length, 1);
  const [record] = deadLetters;
  assert.ok(record);
  assert.equal(record.attempts, 4);
  assert.equal(record.sink, 'fake');
  assert.deepEqual(record.error, { kind: 'sink', message: 'receiver unavailable', retryable: true });
  assert.equal(record.event.id, 'a#1');
  assert.deepEqual(sink.names().slice(-1), ['a']);
  assert.equal(sink.calls.at(-1)?.event.id, 'a#2', 'the next event of the object followed');
  assert.equal(d.backlog, 0);
});

test('the backoff stops growing at maxBackoffMs', async () => {
  const d = delivery({ maxAttempts: 10, initialBackoffMs: 1_000, maxBackoffMs: 4_000, random: () => 1 });
  sink.auto = (_e, call) => call.fail(retryable());
  d.enqueue(ev('a'));
  await clock.runAll();
  const gaps = sink.calls.slice(1).map((c, i) => c.at - (sink.calls[i]?.at ?? 0));
  assert.deepEqual(gaps, [1_000, 2_000, 4_000, 4_000, 4_000, 4_000, 4_000, 4_000, 4_000]);
});

test('a non-retryable failure goes to the dead letter at once', async () => {
  const d = delivery();
  sink.auto = (event, call) => {
    if (event.id === 'a#1') call.fail(new SinkError('bad request', { retryable: false }));
    else call.succeed();
  };
  d.enqueue(ev('a', 1));
  d.enqueue(ev('a', 2));
  await flushMicrotasks();
  assert.deepEqual(
    sink.calls.map((c) => c.event.id),
    ['a#1', 'a#2'],
  );
  const [record] = deadLetters;
  assert.ok(record);
  assert.equal(record.attempts, 1);
  assert.equal(record.error.retryable, false);
  assert.equal(clock.pending, 0, 'no retry was scheduled');
});

test("the receiver's Retry-After replaces the computed backoff", async () => {
  const d = delivery();
  let first = true;
  sink.auto = (_e, call) => {
    if (first) call.fail(new SinkHttpError('429', { retryable: true, statusCode: 429, retryAfterMs: 7_000 }));
    else call.succeed();
    first = false;
  };
  d.enqueue(ev('a'));
  await flushMicrotasks();
  await clock.tick(6_999);
  assert.equal(sink.calls.length, 1, 'not retried before the receiver asked');
  await clock.tick(1);
  assert.equal(sink.calls.length, 2);
  assert.equal(d.backlog, 0);
});

test('a retry waiting for its time does not hold a concurrency slot', async () => {
  const d = delivery({ concurrency: 1 });
  sink.auto = (event, call) => {
    if (nameOf(event) === 'a') call.fail(retryable());
    else call.succeed();
  };
  d.enqueue(ev('a'));
  d.enqueue(ev('b'));
  await flushMicrotasks();
  assert.deepEqual(sink.names(), ['a', 'b']);
  d.destroy();
});

test('one failing sink does not hold up another', async () => {
  const stuck = new ScriptedSink('stuck', () => clock.now());
  const healthy = new ScriptedSink('healthy', () => clock.now());
  healthy.auto = (_e, call) => call.succeed();
  const delivered: string[] = [];
  const a = new SinkDelivery(stuck, { clock });
  const b = new SinkDelivery(healthy, { clock, onDelivered: (e) => delivered.push(e.id) });
  for (let i = 1; i <= 50; i++) {
    const e = ev(`obj-${i % 5}`, i);
    a.enqueue(e);
    b.enqueue(e);
  }
  await flushMicrotasks();
  assert.equal(delivered.length, 50);
  assert.equal(a.backlog, 50);
  assert.equal(stuck.inFlight().length, 4);
  a.destroy();
});

test('onDelivered follows each success in per-object order and metrics count what happened', async () => {
  const counts = {
    delivered: 0,
    failed: [] as string[],
    retried: 0,
    deadLettered: 0,
    latency: [] as number[],
    backlog: [] as number[],
  };
  const delivered: string[] = [];
  const d = delivery({
    maxAttempts: 2,
    onDelivered: (e) => delivered.push(e.id),
    metrics: {
      ...noopDeliveryMetrics,
      delivered: () => counts.delivered++,
      failed: (kind) => counts.failed.push(kind),
      retried: () => counts.retried++,
      deadLettered: () => counts.deadLettered++,
      latency: (s) => counts.latency.push(s),
      backlog: (n) => counts.backlog.push(n),
    },
  });
  let failures = 0;
  sink.auto = (event, call) => {
    if (nameOf(event) === 'bad') call.fail(retryable());
    else if (event.id === 'a#1' && failures++ === 0) call.fail(retryable());
    else call.succeed();
  };
  d.enqueue(ev('a', 1));
  d.enqueue(ev('a', 2));
  d.enqueue(ev('bad', 1));
  await clock.runAll();
  assert.deepEqual(delivered, ['a#1', 'a#2']);
  assert.equal(counts.delivered, 2);
  assert.deepEqual(counts.failed, ['sink', 'sink', 'sink']);
  assert.equal(counts.retried, 2);
  assert.equal(counts.deadLettered, 1);
  assert.deepEqual(counts.latency, [0.25, 0.25]);
  assert.equal(counts.backlog.at(-1), 0);
  assert.ok(Math.max(...counts.backlog) <= 3);
});

test('past maxBacklog the delivery overflows: queued events dropped, objects remembered, onOverflow once', async () => {
  let overflows = 0;
  const d = delivery({ maxBacklog: 3, concurrency: 1, onOverflow: () => overflows++ });
  assert.equal(d.enqueue(ev('a', 1)), true);
  assert.equal(d.enqueue(ev('b', 1)), true);
  assert.equal(d.enqueue(ev('c', 1)), true);
  await flushMicrotasks();
  assert.equal(d.enqueue(ev('d', 1)), false);
  assert.equal(d.state, 'overflowed');
  assert.equal(overflows, 1);
  assert.equal(d.backlog, 1, 'only the delivery in flight is kept');
  for (let i = 0; i < 10_000; i++) assert.equal(d.enqueue(ev(`x${i % 100}`, i)), false);
  assert.equal(d.backlog, 1, 'memory stays bounded while overflowed');
  assert.equal(overflows, 1);
  const remembered = d.overflowedObjects().map((o) => o.name);
  assert.deepEqual(remembered.slice(0, 3).sort(), ['b', 'c', 'd']);
  assert.equal(remembered.length, 103, 'one entry per object, however many events');
  assert.ok(!remembered.includes('a'), 'the event in flight is not dropped');
  assert.deepEqual(d.overflowedObjects()[0], {
    watcher: 'deploys',
    resource: { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' },
    namespace: 'default',
    name: remembered[0],
  });
  sink.inFlight()[0]?.succeed();
  await flushMicrotasks();
  assert.deepEqual(sink.names(), ['a']);
  assert.equal(d.backlog, 0);
  d.destroy();
});

test('resync after an overflow delivers one coalesced event per object and takes new events again', async () => {
  const delivered: SinkRecord[] = [];
  const owner: { delivery?: SinkDelivery } = {};
  const d = delivery({
    maxBacklog: 2,
    concurrency: 1,
    onDelivered: (e) => delivered.push(e),
    // The owner computes the catch-up from its cache against the last confirmed state.
    onOverflow: () => {
      queueMicrotask(() => {
        owner.delivery?.resync(
          d.overflowedObjects().map((o) => ({
            record: ev(o.name, 99, {
              origin: 'resync',
              diff: [{ path: 'spec.replicas', op: 'replace', old: 1, new: 5 }],
            }),
          })),
        );
      });
    },
  });
  owner.delivery = d;
  d.enqueue(ev('a', 1));
  d.enqueue(ev('b', 1));
  await flushMicrotasks();
  d.enqueue(ev('b', 2));
  d.enqueue(ev('b', 3));
  sink.auto = (_e, call) => call.succeed();
  sink.inFlight()[0]?.succeed();
  await flushMicrotasks();
  assert.equal(d.state, 'running');
  assert.deepEqual(
    delivered.map((e) => `${e.id}:${e.type === 'gap' ? 'gap' : e.origin}`),
    ['a#1:live', 'b#99:resync'],
    'b#1..b#3 were coalesced into one change',
  );
  assert.equal(d.overflowedObjects().length, 0);
  assert.equal(d.enqueue(ev('c', 1)), true);
  await flushMicrotasks();
  assert.equal(delivered.at(-1)?.id, 'c#1');
});

test('a resync larger than maxBacklog is not dropped by the next live event; the bound returns once the backlog is under it', async () => {
  let overflows = 0;
  const d = delivery({ maxBacklog: 3, concurrency: 1, onOverflow: () => overflows++ });
  d.resync(['a', 'b', 'c', 'd', 'e', 'f'].map((name) => ({ record: ev(name, 1, { origin: 'resync' }) })));
  await flushMicrotasks();
  assert.equal(d.enqueue(ev('g', 1)), true, 'a live event beside a catch-up of 6 is queued');
  assert.equal(d.enqueue(ev('h', 1)), true);
  assert.equal(d.state, 'running');
  assert.equal(overflows, 0);
  assert.equal(d.backlog, 8);
  // The live events beyond the catch-up are still bounded: 3 more than it held.
  assert.equal(d.enqueue(ev('i', 1)), true);
  assert.equal(d.enqueue(ev('j', 1)), false);
  assert.equal(d.state, 'overflowed');
  assert.equal(overflows, 1);
  sink.auto = (_e, call) => call.succeed();
  sink.inFlight()[0]?.succeed();
  await flushMicrotasks();
  // Back under the bound, it is maxBacklog again.
  d.resync([]);
  await flushMicrotasks();
  for (const name of ['k', 'l', 'm']) assert.equal(d.enqueue(ev(name, 1)), true);
  sink.auto = undefined;
  d.destroy();
});

test('onOverflowDrained is called once per overflow, when the last delivery in flight finished', async () => {
  const calls: string[] = [];
  const d = delivery({
    maxBacklog: 3,
    concurrency: 2,
    onOverflow: () => calls.push(`overflow, backlog ${d.backlog}`),
    onOverflowDrained: () => calls.push(`drained, backlog ${d.backlog}`),
  });
  for (const name of ['a', 'b', 'c']) d.enqueue(ev(name, 1));
  await flushMicrotasks();
  d.enqueue(ev('d', 1));
  for (let i = 0; i < 5; i++) d.enqueue(ev('e', i));
  assert.deepEqual(calls, ['overflow, backlog 2'], 'a and b are still in flight');
  sink.inFlight()[0]?.succeed();
  await flushMicrotasks();
  assert.deepEqual(calls, ['overflow, backlog 2'], 'b is still in flight');
  sink.inFlight()[0]?.fail(new SinkError('refused', { retryable: false }));
  await flushMicrotasks();
  assert.deepEqual(calls, ['overflow, backlog 2', 'drained, backlog 0'], 'dead-lettered counts as finished');
  assert.equal(d.state, 'overflowed', 'the resync is the owner’s to give');
  d.resync([]);
  sink.auto = (_e, call) => call.succeed();
  for (const name of ['f', 'g', 'h', 'i']) {
    assert.equal(d.enqueue(ev(name, 1)), true);
    await flushMicrotasks();
  }
  assert.equal(d.state, 'running');
  assert.equal(calls.length, 2, 'no new overflow, no new signal');
  d.destroy();
});

test('a retryable failure while overflowed is dropped for the resync rather than retried', async () => {
  const d = delivery({ maxBacklog: 1, concurrency: 1 });
  d.enqueue(ev('a', 1));
  await flushMicrotasks();
  d.enqueue(ev('b', 1));
  assert.equal(d.state, 'overflowed');
  sink.inFlight()[0]?.fail(retryable());
  await flushMicrotasks();
  assert.equal(d.backlog, 0);
  assert.equal(clock.pending, 0);
  assert.deepEqual(
    d
      .overflowedObjects()
      .map((o) => o.name)
      .sort(),
    ['a', 'b'],
  );
  assert.equal(deadLetters.length, 0);
});

test('close drains held events, retries included, and closes the sink', async () => {
  const d = delivery();
  let fail = true;
  sink.auto = (_e, call) => {
    if (fail) call.fail(retryable());
    else call.succeed();
    fail = false;
  };
  d.enqueue(ev('a', 1));
  d.enqueue(ev('a', 2));
  await flushMicrotasks();
  const closing = d.close(10_000);
  assert.equal(d.enqueue(ev('b', 1)), false, 'no new events once closing');
  await clock.tick(250);
  assert.deepEqual(await closing, { left: 0, overflowedObjects: 0 });
  assert.deepEqual(
    sink.calls.map((c) => c.event.id),
    ['a#1', 'a#1', 'a#2'],
  );
  assert.equal(sink.closed, 1);
  assert.equal(d.state, 'closed');
});

test('close gives up at the deadline, aborts what is in flight and says how much was left', async () => {
  const slow = new ScriptedSink('slow', () => clock.now());
  slow.auto = (_e, call) => {
    sleep(clock, 100, call.signal).then(call.succeed, call.fail);
  };
  const delivered: string[] = [];
  const d = new SinkDelivery(slow, { clock, onDelivered: (e) => delivered.push(e.id) });
  for (let i = 1; i <= 5; i++) d.enqueue(ev('a', i));
  const closing = d.close(250);
  await clock.tick(250);
  assert.deepEqual(await closing, { left: 3, overflowedObjects: 0 });
  assert.deepEqual(delivered, ['a#1', 'a#2']);
  assert.equal(slow.calls[2]?.signal.aborted, true);
  assert.equal(slow.closed, 1);
  await clock.runAll();
  assert.deepEqual(delivered, ['a#1', 'a#2'], 'nothing is reported after close');
});

test('destroy stops at once: in-flight calls are aborted and retries cancelled', async () => {
  const d = delivery();
  d.enqueue(ev('a'));
  d.enqueue(ev('b'));
  await flushMicrotasks();
  const [first, second] = sink.inFlight();
  first?.fail(retryable());
  await flushMicrotasks();
  assert.equal(clock.pending, 1, 'a retry is scheduled');
  d.destroy(new Error('shutting down'));
  assert.equal(second?.signal.aborted, true);
  assert.equal(clock.pending, 0);
  assert.equal(d.backlog, 0);
  assert.equal(d.enqueue(ev('c')), false);
  await flushMicrotasks();
  assert.equal(sink.closed, 1);
});

test('a throwing callback is logged and does not stop delivery', async () => {
  const d = delivery({
    onDelivered: () => {
      throw new Error('checkpoint store down');
    },
  });
  sink.auto = (_e, call) => call.succeed();
  d.enqueue(ev('a', 1));
  d.enqueue(ev('a', 2));
  await flushMicrotasks();
  assert.equal(sink.calls.length, 2);
  assert.equal(d.backlog, 0);
});

let dir = '';
afterEach(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
  dir = '';
});

test('dead-letter records are JSON lines with the event, sink, attempts and last error', async () => {
  dir = await mkdtemp(join(tmpdir(), 'raven-dead-letter-'));
  const path = join(dir, 'dlq', 'dead.jsonl');
  let done = 0;
  const d = new SinkDelivery(sink, { clock, deadLetterPath: path, onDeadLetter: () => done++ });
  sink.auto = (_e, call) =>
    call.fail(new SinkError('POST https://hooks.example.com/… answered 400', { retryable: false }));
  d.enqueue(ev('a', 1));
  d.enqueue(ev('b', 1));
  await until('both events dead-lettered', () => done >= 2, { everyMs: 5 });
  const records = (await readFile(path, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as DeadLetterRecord);
  assert.deepEqual(records.map((r) => r.event.id).sort(), ['a#1', 'b#1']);
  assert.deepEqual(records[0], {
    time: new Date(clock.now()).toISOString(),
    sink: 'fake',
    attempts: 1,
    error: { kind: 'sink', message: 'POST https://hooks.example.com/… answered 400', retryable: false },
    event: records[0]?.event.id === 'a#1' ? ev('a', 1) : ev('b', 1),
  });
});

test('a silent event passes through its object’s queue in order without reaching the sink', async () => {
  const settled: string[] = [];
  const recorded: string[] = [];
  const delivered: string[] = [];
  const d = delivery({
    concurrency: 1,
    onDelivered: (e) => recorded.push(e.id),
    metrics: { ...noopDeliveryMetrics, delivered: () => delivered.push('x') },
  });
  const note = (id: string) => (how: string) => settled.push(`${id}:${how}`);
  d.enqueue(ev('a', 1), { settled: note('a#1') });
  d.enqueue(ev('a', 2), { verdict: 'silent', settled: note('a#2') });
  d.enqueue(ev('a', 3), { settled: note('a#3') });
  await flushMicrotasks();
  assert.deepEqual(settled, [], 'the silent one waits for the event before it');
  sink.inFlight()[0]?.succeed();
  await flushMicrotasks();
  assert.deepEqual(settled, ['a#1:delivered', 'a#2:silent']);
  assert.deepEqual(sink.names(), ['a', 'a'], 'a#3 went straight on; a#2 never reached the sink');
  sink.inFlight()[0]?.succeed();
  await flushMicrotasks();
  assert.deepEqual(recorded, ['a#1', 'a#2', 'a#3'], 'the checkpoint hook sees the silent one too');
  assert.equal(delivered.length, 2, 'only what the sink accepted counts as delivered');
  d.destroy();
});

test('alreadyDelivered is asked at the head of the queue, after the object’s earlier events settled', async () => {
  const confirmed = new Set<string>();
  const settled: string[] = [];
  const duplicates: string[] = [];
  const d = delivery({
    onDelivered: (e) => confirmed.add(e.id),
    metrics: { ...noopDeliveryMetrics, duplicate: () => duplicates.push('x') },
  });
  const routing = (id: string, same: string) => ({
    alreadyDelivered: () => confirmed.has(same),
    settled: (how: string) => settled.push(`${id}:${how}`),
  });
  d.enqueue(ev('a', 1), routing('a#1', 'nothing'));
  // A replay of a#1 behind it: it is a duplicate only once a#1 is confirmed.
  d.enqueue(ev('a', 1, { id: 'a#1-again' }), routing('a#1-again', 'a#1'));
  d.enqueue(ev('a', 2), routing('a#2', 'nothing'));
  await flushMicrotasks();
  sink.inFlight()[0]?.succeed();
  await flushMicrotasks();
  assert.deepEqual(settled, ['a#1:delivered', 'a#1-again:duplicate']);
  assert.deepEqual(
    sink.calls.map((c) => c.event.id),
    ['a#1', 'a#2'],
  );
  assert.equal(duplicates.length, 1);
  d.destroy();
});

test('an alreadyDelivered check that throws delivers the event: at least once', async () => {
  const d = delivery();
  d.enqueue(ev('a', 1), {
    alreadyDelivered: () => {
      throw new Error('checkpoint unreadable');
    },
  });
  await flushMicrotasks();
  assert.deepEqual(sink.names(), ['a']);
  d.destroy();
});

interface Line {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

function recordingLogger(lines: Line[], bindings: Record<string, unknown> = {}): Logger {
  const at =
    (level: string) =>
    (fields: object, msg = ''): void => {
      lines.push({ level, msg, fields: { ...bindings, ...fields } });
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => recordingLogger(lines, { ...bindings, ...more }),
  };
}

test('failures are logged at warn at most once per 30 s per sink, with how many failed since the last line', async () => {
  const lines: Line[] = [];
  const d = delivery({
    logger: recordingLogger(lines),
    maxAttempts: 1000,
    initialBackoffMs: 1000,
    maxBackoffMs: 1000,
  });
  sink.auto = (_e, call) => call.fail(new SinkError('receiver answered 503', { retryable: true }));
  for (const name of ['a', 'b', 'c']) d.enqueue(ev(name));
  await flushMicrotasks();
  const warnings = (): Line[] => lines.filter((l) => l.level === 'warn');
  assert.equal(warnings().length, 1, 'the first failure is logged at once');
  assert.deepEqual(
    [warnings()[0]?.msg, warnings()[0]?.fields.sink, warnings()[0]?.fields.failures],
    ['delivery failed; retrying', 'fake', 1],
  );
  await clock.tick(29_000);
  assert.equal(warnings().length, 1, 'three objects retried every second: no more lines within 30 s');
  await clock.tick(1_000);
  assert.equal(warnings().length, 2);
  assert.ok(
    Number(warnings()[1]?.fields.failures) > 100,
    'the second line counts every failure since the first',
  );
  sink.auto = (_e, call) => call.succeed();
  await clock.tick(1_000);
  const recovered = lines.filter((l) => l.msg === 'delivering again');
  assert.equal(recovered.length, 1, 'one line when the sink accepts events again');
  assert.equal(recovered[0]?.level, 'info');
  assert.equal(warnings().length, 2);
  const failed = sink.calls.length - 3;
  const reported =
    warnings().reduce((n, l) => n + Number(l.fields.failures), 0) +
    Number(recovered[0].fields.failuresSinceLastLine);
  assert.equal(reported, failed, 'every failure is accounted for in some line');
  d.destroy();
});
