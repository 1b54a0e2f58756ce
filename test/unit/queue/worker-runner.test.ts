import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runWorkers, type WorkHandler } from '../../../src/queue/worker-runner.js';
import { done, failed, requeueAfter, type HandlerResult } from '../../../src/queue/handler-result.js';
import { createRateLimitingQueue, type RateLimitingQueue } from '../../../src/queue/rate-limiting-queue.js';
import { exponentialRateLimiter } from '../../../src/queue/exponential-rate-limiter.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import type { Logger } from '../../../src/util/logger.js';
import { silentLogger } from '../../../src/util/logger.js';
import { flushMicrotasks, track } from './track.js';

function setup(): { clock: FakeClock; queue: RateLimitingQueue<string> } {
  const clock = new FakeClock();
  return { clock, queue: createRateLimitingQueue<string>({ clock, rateLimiter: exponentialRateLimiter() }) };
}

/** A handler whose calls the test finishes by hand. */
function manualHandler(): {
  handler: WorkHandler<string>;
  running: string[];
  finish(key: string, result?: HandlerResult): void;
  signals: Map<string, AbortSignal>;
} {
  const pending = new Map<string, (result: HandlerResult) => void>();
  const signals = new Map<string, AbortSignal>();
  const running: string[] = [];
  return {
    running,
    signals,
    handler: (key, signal) => {
      running.push(key);
      signals.set(key, signal);
      return new Promise((resolve) => pending.set(key, resolve));
    },
    finish(key, result = done()) {
      const resolve = pending.get(key);
      assert.ok(resolve, `${key} is not running`);
      pending.delete(key);
      resolve(result);
    },
  };
}

function recordingLogger(): Logger & { errors: string[] } {
  const errors: string[] = [];
  return { ...silentLogger, errors, error: (_obj, msg) => errors.push(msg ?? ''), child: () => silentLogger };
}

test('workers handle different keys at once but never the same key twice at once', async () => {
  const { clock, queue } = setup();
  const h = manualHandler();
  const runner = runWorkers(queue, h.handler, { workers: 3, clock });
  queue.add('a');
  queue.add('b');
  await flushMicrotasks();
  assert.deepEqual(h.running, ['a', 'b']);
  queue.add('a');
  await flushMicrotasks();
  assert.deepEqual(h.running, ['a', 'b'], 'a second a must wait for the first');
  h.finish('a');
  await flushMicrotasks();
  assert.deepEqual(h.running, ['a', 'b', 'a']);
  h.finish('a');
  h.finish('b');
  await flushMicrotasks();
  assert.equal(runner.stats.succeeded, 3);
  assert.equal(runner.inFlight, 0);
});

test('a done result forgets the key backoff', async () => {
  const { clock, queue } = setup();
  queue.addRateLimited('a');
  queue.addRateLimited('a');
  runWorkers(queue, () => Promise.resolve(done()), { clock });
  await clock.tick(10);
  assert.equal(queue.numRequeues('a'), 0);
});

test('a requeue-after result looks at the key again after the delay', async () => {
  const { clock, queue } = setup();
  const seen: number[] = [];
  const runner = runWorkers(
    queue,
    () => {
      seen.push(clock.now());
      return Promise.resolve(seen.length < 3 ? requeueAfter(60_000) : done());
    },
    { clock },
  );
  const start = clock.now();
  queue.add('a');
  await clock.tick(59_999);
  assert.equal(seen.length, 1);
  await clock.tick(1);
  assert.equal(seen.length, 2);
  await clock.runAll();
  assert.deepEqual(
    seen.map((t) => t - start),
    [0, 60_000, 120_000],
  );
  assert.equal(queue.numRequeues('a'), 0);
  assert.deepEqual(runner.stats, { processed: 3, succeeded: 1, requeued: 2, failed: 0, thrown: 0 });
});

test('an error result retries the key with growing backoff until it succeeds', async () => {
  const { clock, queue } = setup();
  const seen: number[] = [];
  const runner = runWorkers(
    queue,
    () => {
      seen.push(clock.now());
      return Promise.resolve(seen.length < 4 ? failed(new Error('conflict')) : done());
    },
    { clock },
  );
  const start = clock.now();
  queue.add('a');
  await clock.runAll();
  assert.deepEqual(
    seen.map((t) => t - start),
    [0, 5, 15, 35],
  );
  assert.equal(runner.stats.failed, 3);
  assert.equal(queue.numRequeues('a'), 0);
});

test('a throwing or rejecting handler is logged and retried while the other keys keep flowing', async () => {
  const { clock, queue } = setup();
  const logger = recordingLogger();
  const calls: string[] = [];
  const handler: WorkHandler<string> = async (key) => {
    calls.push(key);
    if (key === 'sync-throw' && calls.filter((k) => k === key).length === 1) throw new Error('boom');
    await Promise.resolve();
    if (key === 'reject' && calls.filter((k) => k === key).length === 1) throw new Error('async boom');
    return done();
  };
  const runner = runWorkers(queue, handler, { clock, logger, workers: 1 });
  queue.add('sync-throw');
  queue.add('reject');
  queue.add('fine');
  await clock.runAll();
  assert.deepEqual(calls, ['sync-throw', 'reject', 'fine', 'sync-throw', 'reject']);
  assert.equal(runner.stats.thrown, 2);
  assert.equal(runner.stats.succeeded, 3);
  assert.equal(logger.errors.length, 2);
  assert.equal(queue.len, 0);
});

test('a handler that is not even async and throws does not stop the runner', async () => {
  const { clock, queue } = setup();
  let calls = 0;
  const runner = runWorkers(
    queue,
    () => {
      calls++;
      if (calls === 1) throw new TypeError('not a promise');
      return Promise.resolve(done());
    },
    { clock },
  );
  queue.add('a');
  await clock.runAll();
  assert.equal(calls, 2);
  assert.equal(runner.stats.thrown, 1);
});

test('close stops taking keys and waits for the handlers in flight', async () => {
  const { clock, queue } = setup();
  const h = manualHandler();
  const runner = runWorkers(queue, h.handler, { clock, workers: 2 });
  queue.add('a');
  await flushMicrotasks();
  const closing = track(runner.close());
  queue.add('b');
  await flushMicrotasks();
  assert.deepEqual(h.running, ['a'], 'no new key is taken after close');
  assert.equal(closing.settled, false);
  h.finish('a');
  assert.deepEqual(await closing.promise, { drained: true, abandoned: [] });
  assert.equal(queue.len, 1, 'the queue itself stays open with b waiting');
  assert.equal(h.signals.get('a')?.aborted, false);
  assert.equal(clock.pending, 0, 'the deadline timer is cleared');
});

test('close aborts the handlers still running at the deadline and reports them', async () => {
  const { clock, queue } = setup();
  const h = manualHandler();
  const runner = runWorkers(queue, h.handler, { clock, shutdownDeadlineMs: 5_000 });
  queue.add('stuck');
  await flushMicrotasks();
  const closing = track(runner.close());
  await clock.tick(4_999);
  assert.equal(closing.settled, false);
  await clock.tick(1);
  assert.deepEqual(await closing.promise, { drained: false, abandoned: ['stuck'] });
  assert.equal(h.signals.get('stuck')?.aborted, true);
});

test('aborting the signal given at start closes the runner gracefully', async () => {
  const { clock, queue } = setup();
  const h = manualHandler();
  const controller = new AbortController();
  const runner = runWorkers(queue, h.handler, { clock, signal: controller.signal });
  queue.add('a');
  await flushMicrotasks();
  controller.abort();
  const finished = track(runner.finished);
  await flushMicrotasks();
  assert.equal(finished.settled, false);
  h.finish('a');
  await runner.finished;
  assert.deepEqual(await runner.close(), { drained: true, abandoned: [] });
});

test('destroy aborts the handlers in flight at once', async () => {
  const { clock, queue } = setup();
  const h = manualHandler();
  const runner = runWorkers(queue, h.handler, { clock });
  queue.add('a');
  await flushMicrotasks();
  runner.destroy(new Error('now'));
  assert.equal(h.signals.get('a')?.aborted, true);
  h.finish('a');
  await runner.finished;
  queue.add('b');
  await flushMicrotasks();
  assert.deepEqual(h.running, ['a']);
});

test('shutting the queue down ends the workers once it is empty', async () => {
  const { clock, queue } = setup();
  const runner = runWorkers(queue, () => Promise.resolve(done()), { clock, workers: 4 });
  queue.add('a');
  queue.shutDown();
  await runner.finished;
  assert.equal(runner.stats.processed, 1);
});

test('the longest-running key and its running time are tracked', async () => {
  const { clock, queue } = setup();
  const h = manualHandler();
  const runner = runWorkers(queue, h.handler, { clock, workers: 2 });
  assert.equal(runner.longestRunning(), undefined);
  queue.add('slow');
  await clock.tick(1_000);
  queue.add('quick');
  await clock.tick(500);
  assert.deepEqual(runner.longestRunning(), { key: 'slow', runningMs: 1_500 });
  h.finish('slow');
  await flushMicrotasks();
  assert.deepEqual(runner.longestRunning(), { key: 'quick', runningMs: 500 });
  h.finish('quick');
  await flushMicrotasks();
  assert.equal(runner.longestRunning(), undefined);
});
