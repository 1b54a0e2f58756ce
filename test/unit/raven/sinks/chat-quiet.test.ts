/**
 * The chat sink keeps a channel quiet: batches, a digest of status-only churn and repeats, spacing
 * between posts, and a Retry-After that pauses the whole sink. Posts go to a local HTTP receiver;
 * time is the fake clock's, advanced step by step while the real HTTP round trips complete, so no
 * assertion depends on how fast the machine is.
 */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { Agent } from 'undici';
import { FakeClock, flushMicrotasks } from '../../../../src/testing/fake-clock.js';
import { ChatSink, type ChatSinkOptions } from '../../../../src/raven/sinks/chat-sink.js';
import { SinkDelivery } from '../../../../src/raven/delivery/sink-delivery.js';
import { SinkHttpError } from '../../../../src/raven/sinks/sink-http-error.js';
import type { ChangeEvent } from '../../../../src/raven/model/change-event.js';
import { HttpReceiver } from '../../../harness/http-receiver.js';
import { sampleEvent } from './fixtures.js';

let receiver: HttpReceiver;
const dispatcher = new Agent();
const signal = new AbortController().signal;

before(async () => {
  receiver = await HttpReceiver.start();
});
beforeEach(() => {
  receiver.requests.length = 0;
});
after(async () => {
  await receiver.close();
  await dispatcher.close();
});

function sink(clock: FakeClock, extra: Partial<ChatSinkOptions> = {}): ChatSink {
  return new ChatSink({
    name: 'chat',
    platform: 'slack',
    url: receiver.url('/slack/T000/B000/tok'),
    dispatcher,
    clock,
    ...extra,
  });
}

/**
 * Advance virtual time in small steps, letting real I/O complete between them, until `done()`.
 * The step count is a safety net against a hang, not a deadline.
 */
async function drive(clock: FakeClock, done: () => boolean, stepMs = 250): Promise<void> {
  for (let step = 0; step < 4_000; step++) {
    if (done()) return;
    await clock.tick(stepMs);
    await flushMicrotasks();
    await delay(2);
  }
  assert.fail('the condition never held');
}

/** Wait for real I/O only (virtual time stands still). */
async function settle(done: () => boolean): Promise<void> {
  for (let i = 0; i < 5_000 && !done(); i++) await delay(2);
}

const texts = (): string[] => receiver.requests.map((r) => (r.json as { text: string }).text);

function statusChange(i: number): ChangeEvent {
  return sampleEvent({
    id: `deploys:uid-web:${100 + i}:modified`,
    resourceVersion: String(100 + i),
    diff: [{ path: 'status.readyReplicas', op: 'replace', old: i, new: i + 1 }],
  });
}

test('one spec change followed by seven status-only changes of a Deployment is two posts, and all eight are delivered', async () => {
  const clock = new FakeClock();
  const delivered: string[] = [];
  const delivery = new SinkDelivery(sink(clock), {
    clock,
    random: () => 0,
    onDelivered: (e) => delivered.push(e.id),
  });
  delivery.enqueue(sampleEvent());
  for (let i = 1; i <= 7; i++) delivery.enqueue(statusChange(i));
  await drive(clock, () => delivered.length === 8 && receiver.requests.length === 2);
  // Nothing else comes: the digest went out with the second post.
  await drive(clock, () => clock.now() > 0, 10_000);
  assert.equal(receiver.requests.length, 2);
  assert.equal(texts()[0], 'modified Deployment default/web');
  assert.match(
    texts()[1] ?? '',
    /^Deployment default\/web: 7 status-only changes since its last message; latest: status\.readyReplicas: 7 → 8$/,
  );
  await delivery.close(1_000);
});

test('changes to several objects within the window go out as one post, each acknowledged by it', async () => {
  const clock = new FakeClock();
  const chat = sink(clock);
  let settled = 0;
  const deliveries = ['a', 'b', 'c', 'd', 'e'].map((name) =>
    chat.deliver(sampleEvent({ name }), signal).then(() => settled++),
  );
  await flushMicrotasks();
  assert.equal(receiver.requests.length, 0, 'nothing is posted before the window closes');
  assert.equal(settled, 0);
  await drive(clock, () => settled === 5);
  await Promise.all(deliveries);
  assert.equal(receiver.requests.length, 1);
  const body = receiver.requests[0]?.json as { text: string; blocks: { type: string }[] };
  assert.equal(body.text.split('\n').length, 5);
  assert.equal(body.blocks.filter((b) => b.type === 'divider').length, 4);
});

test('a full batch is posted at once, without waiting for the window', async () => {
  const clock = new FakeClock();
  const chat = sink(clock, { quiet: { batchMaxItems: 2 } });
  const first = Promise.all(['a', 'b'].map((name) => chat.deliver(sampleEvent({ name }), signal)));
  await settle(() => receiver.requests.length === 1);
  await first;
  assert.equal(receiver.requests.length, 1, 'posted with no time passing');
});

test('a 429 with Retry-After pauses every post of the sink until then', async () => {
  const clock = new FakeClock();
  const chat = sink(clock, { quiet: { batchWindowMs: 0 } });
  receiver.reply({ status: 429, headers: { 'retry-after': '30' }, body: 'rate limited' });
  const start = clock.now();
  await assert.rejects(chat.deliver(sampleEvent({ name: 'a' }), signal), (err) => {
    assert.ok(err instanceof SinkHttpError);
    assert.equal(err.retryAfterMs, 30_000, "the project's Retry-After parser read the header");
    return true;
  });
  // Another object's change waits for the pause too.
  let done = false;
  const next = chat.deliver(sampleEvent({ name: 'b' }), signal).then(() => (done = true));
  await drive(clock, () => clock.now() - start >= 29_000, 1_000);
  assert.equal(receiver.requests.length, 1, 'nothing was posted during the pause');
  await drive(clock, () => done);
  await next;
  assert.equal(receiver.requests.length, 2);
  assert.ok(clock.now() - start >= 30_000);
  receiver.assertConsumed();
});

test('posts of one sink are spaced by perSinkMs', async () => {
  const clock = new FakeClock();
  const chat = sink(clock, { quiet: { batchWindowMs: 0, perSinkMs: 5_000 } });
  await drive(clock, () => receiver.requests.length === 0);
  const start = clock.now();
  const a = chat.deliver(sampleEvent({ name: 'a' }), signal);
  await settle(() => receiver.requests.length === 1);
  await a;
  let done = false;
  const b = chat.deliver(sampleEvent({ name: 'b' }), signal).then(() => (done = true));
  await drive(clock, () => done, 500);
  await b;
  assert.ok(clock.now() - start >= 5_000, `second post after ${clock.now() - start} ms`);
});

test("an object's next message waits perObjectMs after its previous one; other objects do not", async () => {
  const clock = new FakeClock();
  const chat = sink(clock, { quiet: { batchWindowMs: 0, perSinkMs: 0, perObjectMs: 60_000 } });
  const start = clock.now();
  await Promise.all([chat.deliver(sampleEvent({ name: 'a' }), signal)]);
  let again = false;
  const second = chat
    .deliver(
      sampleEvent({ name: 'a', diff: [{ path: 'spec.replicas', op: 'replace', old: 3, new: 4 }] }),
      signal,
    )
    .then(() => (again = true));
  await chat.deliver(sampleEvent({ name: 'b' }), signal);
  assert.equal(again, false);
  assert.equal(receiver.requests.length, 2, 'b went out at once');
  await drive(clock, () => again, 1_000);
  await second;
  assert.ok(clock.now() - start >= 60_000);
});

test('a message identical to the previous one of the object is counted, not posted again', async () => {
  const clock = new FakeClock();
  const chat = sink(clock, { template: '{{type}} {{name}}', quiet: { batchWindowMs: 0, perSinkMs: 0 } });
  await chat.deliver(sampleEvent(), signal);
  await chat.deliver(sampleEvent({ id: 'other-id', resourceVersion: '43' }), signal);
  await settle(() => receiver.requests.length === 2);
  assert.deepEqual(texts(), ['modified web', 'Deployment default/web: the same message 1 more time']);
});

test('a distinct change that a template renders as the same text is posted, not counted as a repeat', async () => {
  const clock = new FakeClock();
  // The chat-alerts example's template: a scale and an image change read the same.
  const chat = sink(clock, {
    template: '{{type}} {{resource.kind}} {{namespace}}/{{name}}',
    quiet: { batchWindowMs: 0, perSinkMs: 0 },
  });
  await chat.deliver(sampleEvent(), signal);
  const image = sampleEvent({
    id: 'deploys:uid-web:43:modified',
    resourceVersion: '43',
    diff: [
      {
        path: 'spec.template.spec.containers[0].image',
        op: 'replace',
        old: 'nginx:1.27',
        new: 'nginx:1.28',
      },
    ],
  });
  await chat.deliver(image, signal);
  await chat.deliver(sampleEvent({ id: 'deploys:uid-web:44:deleted', type: 'deleted', diff: [] }), signal);
  await settle(() => receiver.requests.length === 3);
  assert.deepEqual(texts(), [
    'modified Deployment default/web',
    'modified Deployment default/web',
    'deleted Deployment default/web',
  ]);
  assert.ok(
    texts().every((t) => !t.includes('the same message')),
    `no change may be folded: ${texts().join(' | ')}`,
  );
});

test('a failed post rejects every change of its batch, and their retry is not taken as a repeat', async () => {
  const clock = new FakeClock();
  const chat = sink(clock, { quiet: { batchWindowMs: 0, perSinkMs: 0 } });
  receiver.reply({ status: 500, body: 'oops' });
  await assert.rejects(chat.deliver(sampleEvent(), signal), SinkHttpError);
  await chat.deliver(sampleEvent(), signal);
  assert.equal(receiver.requests.length, 2);
  assert.equal(texts()[1], 'modified Deployment default/web', 'the retry is posted in full');
});

test('with statusOnly: post, a status-only change is a message of its own', async () => {
  const clock = new FakeClock();
  const chat = sink(clock, { statusOnly: 'post', quiet: { batchWindowMs: 0, perSinkMs: 0 } });
  await chat.deliver(statusChange(1), signal);
  assert.equal(receiver.requests.length, 1);
  assert.equal(texts()[0], 'modified Deployment default/web');
});
