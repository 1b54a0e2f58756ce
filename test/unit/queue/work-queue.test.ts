import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWorkQueue, type QueueItem } from '../../../src/queue/work-queue.js';
import {
  noopQueueMetrics,
  type QueueMetrics,
  type UnfinishedWork,
} from '../../../src/queue/queue-metrics.js';
import { Fifo } from '../../../src/util/fifo.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { flushMicrotasks, track } from './track.js';

async function key<K>(item: Promise<QueueItem<K>>): Promise<K> {
  const got = await item;
  assert.equal(got.shutdown, false);
  return got.key;
}

test('keys are handed out in the order they were first added', async () => {
  const queue = createWorkQueue<string>();
  for (const k of ['a', 'b', 'c']) queue.add(k);
  assert.equal(queue.len, 3);
  assert.deepEqual([await key(queue.get()), await key(queue.get()), await key(queue.get())], ['a', 'b', 'c']);
  assert.equal(queue.len, 0);
});

test('a key added again while it is waiting is queued only once', async () => {
  const queue = createWorkQueue<string>();
  queue.add('a');
  queue.add('b');
  queue.add('a');
  assert.equal(queue.len, 2);
  assert.equal(await key(queue.get()), 'a');
  assert.equal(await key(queue.get()), 'b');
  assert.equal(queue.len, 0);
});

test('get waits for a key to be added', async () => {
  const queue = createWorkQueue<string>();
  const pending = track(queue.get());
  await flushMicrotasks();
  assert.equal(pending.settled, false);
  queue.add('a');
  assert.deepEqual(await pending.promise, { shutdown: false, key: 'a' });
});

test('a key being processed is never handed to a second worker', async () => {
  const queue = createWorkQueue<string>();
  queue.add('a');
  assert.equal(await key(queue.get()), 'a');
  queue.add('a');
  assert.equal(queue.len, 0);
  const second = track(queue.get());
  await flushMicrotasks();
  assert.equal(second.settled, false, 'the key must wait until the first worker is done');
  queue.done('a');
  assert.equal(await key(second.promise), 'a');
});

test('a key added several times while being processed is re-queued once after done', async () => {
  const queue = createWorkQueue<string>();
  queue.add('a');
  await queue.get();
  queue.add('a');
  queue.add('a');
  queue.add('b');
  queue.done('a');
  assert.equal(queue.len, 2);
  assert.deepEqual([await key(queue.get()), await key(queue.get())], ['b', 'a']);
});

test('a key that was not re-added is not queued again by done', () => {
  const queue = createWorkQueue<string>();
  queue.add('a');
  void queue.get();
  queue.done('a');
  queue.done('never-got');
  assert.equal(queue.len, 0);
});

test('an aborted get rejects with the reason and does not swallow the next key', async () => {
  const queue = createWorkQueue<string>();
  const controller = new AbortController();
  const aborted = queue.get(controller.signal);
  controller.abort(new Error('worker stopping'));
  await assert.rejects(aborted, /worker stopping/);
  await assert.rejects(queue.get(controller.signal), /worker stopping/);
  queue.add('a');
  assert.equal(queue.len, 1);
  assert.equal(await key(queue.get()), 'a');
});

test('after shutdown adds are ignored, waiting keys are still handed out, then get reports shutdown', async () => {
  const queue = createWorkQueue<string>();
  queue.add('a');
  queue.shutDown();
  queue.add('b');
  assert.equal(queue.shuttingDown, true);
  assert.equal(queue.len, 1);
  assert.equal(await key(queue.get()), 'a');
  assert.deepEqual(await queue.get(), { shutdown: true });
});

test('shutdown wakes every waiting worker with a shutdown result', async () => {
  const queue = createWorkQueue<string>();
  const waiters = [track(queue.get()), track(queue.get())];
  await flushMicrotasks();
  queue.shutDown();
  for (const waiter of waiters) assert.deepEqual(await waiter.promise, { shutdown: true });
});

test('shutdown with drain waits until the keys in flight are done', async () => {
  const queue = createWorkQueue<string>();
  queue.add('a');
  queue.add('b');
  await queue.get();
  await queue.get();
  const drain = track(queue.shutDownWithDrain());
  queue.done('a');
  await flushMicrotasks();
  assert.equal(drain.settled, false);
  queue.done('b');
  await drain.promise;
  assert.equal(drain.error, undefined);
  await queue.shutDownWithDrain();
});

test('shutdown with drain gives up when its signal aborts', async () => {
  const queue = createWorkQueue<string>();
  queue.add('a');
  await queue.get();
  const controller = new AbortController();
  const drain = queue.shutDownWithDrain(controller.signal);
  controller.abort(new Error('deadline'));
  await assert.rejects(drain, /deadline/);
});

test('the queue reports depth, adds, latency, work duration and unfinished work to its metrics', async () => {
  const clock = new FakeClock();
  const seen = { depth: [] as number[], added: 0, latency: [] as number[], work: [] as number[] };
  let probe: (() => UnfinishedWork) | undefined;
  const metrics: QueueMetrics = {
    ...noopQueueMetrics,
    depth: (n) => seen.depth.push(n),
    added: () => seen.added++,
    queueLatency: (s) => seen.latency.push(s),
    workDuration: (s) => seen.work.push(s),
    unfinishedWork: (p) => (probe = p),
  };
  const queue = createWorkQueue<string>({ clock, metrics });
  queue.add('a');
  queue.add('a');
  queue.add('b');
  await clock.tick(2_000);
  await queue.get();
  await clock.tick(500);
  await queue.get();
  await clock.tick(1_000);
  assert.ok(probe, 'the queue hands its metrics a probe when it is created');
  assert.deepEqual(probe(), { seconds: 2.5, longestRunningSeconds: 1.5 });
  queue.done('a');
  assert.equal(seen.added, 2);
  assert.deepEqual(seen.depth, [1, 2, 1, 0]);
  assert.deepEqual(seen.latency, [2, 2.5]);
  assert.deepEqual(seen.work, [1.5]);
  assert.deepEqual(probe(), { seconds: 1, longestRunningSeconds: 1 });
});

test('the internal list keeps its order across compactions', () => {
  const fifo = new Fifo<number>();
  const out: number[] = [];
  for (let i = 0; i < 5000; i++) {
    fifo.push(i);
    if (i % 3 === 0) out.push(fifo.shift() ?? -1);
  }
  while (fifo.length > 0) out.push(fifo.shift() ?? -1);
  assert.deepEqual(
    out,
    Array.from({ length: 5000 }, (_, i) => i),
  );
  assert.equal(fifo.shift(), undefined);
});
