import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDelayingQueue, type DelayingQueue } from '../../../src/queue/delaying-queue.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';

/** Take every key waiting in the queue right now, marking each done. */
async function drain(queue: DelayingQueue<string>): Promise<string[]> {
  const keys: string[] = [];
  while (queue.len > 0) {
    const item = await queue.get();
    if (item.shutdown) break;
    keys.push(item.key);
    queue.done(item.key);
  }
  return keys;
}

test('a key added after a delay is queued only once its due time has passed', async () => {
  const clock = new FakeClock();
  const queue = createDelayingQueue<string>({ clock });
  queue.addAfter('a', 1_000);
  assert.equal(queue.len, 0);
  assert.equal(queue.delayedLen, 1);
  await clock.tick(999);
  assert.equal(queue.len, 0);
  await clock.tick(1);
  assert.equal(queue.len, 1);
  assert.equal(queue.delayedLen, 0);
});

test('delayed keys become due in due-time order, not in the order they were added', async () => {
  const clock = new FakeClock();
  const queue = createDelayingQueue<string>({ clock });
  queue.addAfter('late', 300);
  queue.addAfter('early', 100);
  queue.addAfter('middle', 200);
  queue.addAfter('tie', 200);
  await clock.tick(300);
  assert.deepEqual(await drain(queue), ['early', 'middle', 'tie', 'late']);
});

test('an earlier due time for a waiting key wins and a later one changes nothing', async () => {
  const clock = new FakeClock();
  const queue = createDelayingQueue<string>({ clock });
  queue.addAfter('a', 5_000);
  queue.addAfter('a', 1_000);
  queue.addAfter('a', 9_000);
  assert.equal(queue.delayedLen, 1);
  await clock.tick(1_000);
  assert.deepEqual(await drain(queue), ['a']);
  await clock.tick(10_000);
  assert.deepEqual(await drain(queue), [], 'the superseded due times must not add the key again');
});

test('a zero or negative delay adds the key at once', () => {
  const queue = createDelayingQueue<string>({ clock: new FakeClock() });
  queue.addAfter('a', 0);
  queue.addAfter('b', -5);
  assert.equal(queue.len, 2);
  assert.equal(queue.delayedLen, 0);
});

test('a delayed key that is already queued when it falls due is not queued twice', async () => {
  const clock = new FakeClock();
  const queue = createDelayingQueue<string>({ clock });
  queue.add('a');
  queue.addAfter('a', 10);
  await clock.tick(10);
  assert.equal(queue.len, 1);
});

test('only one clock timer is armed however many keys are waiting', async () => {
  const clock = new FakeClock();
  const queue = createDelayingQueue<string>({ clock });
  for (let i = 1; i <= 50; i++) queue.addAfter(`k${i}`, i * 10);
  assert.equal(clock.pending, 1);
  await clock.tick(250);
  assert.equal(queue.len, 25);
  assert.equal(clock.pending, 1);
  await clock.runAll();
  assert.equal(queue.len, 50);
  assert.equal(clock.pending, 0);
});

test('shutdown drops the delayed keys and disarms the timer', async () => {
  const clock = new FakeClock();
  const queue = createDelayingQueue<string>({ clock });
  queue.addAfter('a', 100);
  queue.shutDown();
  queue.addAfter('b', 100);
  assert.equal(clock.pending, 0);
  assert.equal(queue.delayedLen, 0);
  await clock.tick(1_000);
  assert.equal(queue.len, 0);
  assert.deepEqual(await queue.get(), { shutdown: true });
});
