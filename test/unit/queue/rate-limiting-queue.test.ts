import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRateLimitingQueue } from '../../../src/queue/rate-limiting-queue.js';
import { exponentialRateLimiter } from '../../../src/queue/exponential-rate-limiter.js';
import { noopQueueMetrics } from '../../../src/queue/queue-metrics.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';

test('a rate-limited key is added after its limiter delay, growing with each retry', async () => {
  const clock = new FakeClock();
  const queue = createRateLimitingQueue<string>({ clock, rateLimiter: exponentialRateLimiter() });
  queue.addRateLimited('a');
  await clock.tick(4);
  assert.equal(queue.len, 0);
  await clock.tick(1);
  assert.equal(queue.len, 1);
  const item = await queue.get();
  assert.equal(item.shutdown, false);
  queue.done('a');
  queue.addRateLimited('a');
  await clock.tick(9);
  assert.equal(queue.len, 0);
  await clock.tick(1);
  assert.equal(queue.len, 1);
  assert.equal(queue.numRequeues('a'), 2);
});

test('forget resets the backoff without removing the key from the queue', async () => {
  const clock = new FakeClock();
  const queue = createRateLimitingQueue<string>({ clock, rateLimiter: exponentialRateLimiter() });
  queue.addRateLimited('a');
  queue.addRateLimited('a');
  queue.forget('a');
  assert.equal(queue.numRequeues('a'), 0);
  assert.equal(queue.delayedLen, 1);
  await clock.tick(5);
  assert.equal(queue.len, 1);
});

test('each rate-limited add is reported as a retry', () => {
  let retries = 0;
  const queue = createRateLimitingQueue<string>({
    clock: new FakeClock(),
    metrics: { ...noopQueueMetrics, retried: () => retries++ },
  });
  queue.addRateLimited('a');
  queue.addRateLimited('b');
  assert.equal(retries, 2);
});

test('rate-limited adds are ignored once the queue is shut down', async () => {
  const clock = new FakeClock();
  const queue = createRateLimitingQueue<string>({ clock });
  queue.shutDown();
  queue.addRateLimited('a');
  queue.addAfter('b', 10);
  queue.add('c');
  await clock.runAll();
  assert.equal(queue.len, 0);
  assert.equal(queue.numRequeues('a'), 0);
  assert.deepEqual(await queue.get(), { shutdown: true });
});
