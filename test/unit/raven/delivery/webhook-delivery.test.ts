/**
 * The delivery and a real sink over real sockets: a receiver that goes down and comes back.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { Agent } from 'undici';
import { SinkDelivery } from '../../../../src/raven/delivery/sink-delivery.js';
import { WebhookSink } from '../../../../src/raven/sinks/webhook-sink.js';
import { HttpReceiver } from '../../../harness/http-receiver.js';
import { sampleEvent } from '../sinks/fixtures.js';

test('events wait while the receiver is down and arrive in per-object order once it is back', async () => {
  const receiver = await HttpReceiver.start();
  const dispatcher = new Agent();
  const delivered: string[] = [];
  const d = new SinkDelivery(new WebhookSink({ name: 'hook', url: receiver.url('/in'), dispatcher }), {
    initialBackoffMs: 10,
    maxBackoffMs: 40,
    maxAttempts: 1_000,
    onDelivered: (e) => delivered.push(e.id),
  });
  try {
    await receiver.down();
    const ids: string[] = [];
    for (let i = 1; i <= 4; i++)
      for (const name of ['a', 'b']) {
        const event = sampleEvent({ name, id: `${name}#${i}` });
        ids.push(event.id);
        d.enqueue(event);
      }
    await delay(100);
    assert.equal(delivered.length, 0);
    receiver.reply({ status: 503 }, { status: 429, headers: { 'retry-after': '0' } });
    await receiver.up();
    const result = await d.close(10_000);
    assert.equal(result.left, 0);
    assert.deepEqual([...delivered].sort(), [...ids].sort());
    const arrivals = receiver.requests.filter((r) => r.headers['x-raven-event-id'] !== undefined);
    for (const name of ['a', 'b']) {
      const seen = arrivals
        .map((r) => String(r.headers['x-raven-event-id']))
        .filter((id) => id.startsWith(`${name}#`));
      // At least once: a failed answer is followed by the same event, never by a later one.
      const firsts = seen.filter((id, i) => seen.indexOf(id) === i);
      assert.deepEqual(
        firsts,
        [1, 2, 3, 4].map((i) => `${name}#${i}`),
      );
    }
    receiver.assertConsumed();
  } finally {
    d.destroy();
    await receiver.close();
    await dispatcher.close();
  }
});
