/**
 * The delivery and a real sink over real sockets: a receiver that goes down and comes back.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { Agent } from 'undici';
import { SinkDelivery } from '../../../../src/raven/delivery/sink-delivery.js';
import { noopDeliveryMetrics } from '../../../../src/raven/metrics/delivery-metrics.js';
import { WebhookSink } from '../../../../src/raven/sinks/webhook-sink.js';
import { HttpReceiver } from '../../../harness/http-receiver.js';
import { until } from '../../../harness/until.js';
import { sampleEvent } from '../sinks/fixtures.js';
import type { Logger } from '../../../../src/util/logger.js';

test('events wait while the receiver is down and arrive in per-object order once it is back', async () => {
  const receiver = await HttpReceiver.start();
  const dispatcher = new Agent();
  const delivered: string[] = [];
  const failures: string[] = [];
  const warned: string[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (fields, msg) => warned.push(JSON.stringify({ msg, ...fields })),
    error: () => undefined,
    child: () => logger,
  };
  const d = new SinkDelivery(new WebhookSink({ name: 'hook', url: receiver.url('/in'), dispatcher }), {
    initialBackoffMs: 10,
    maxBackoffMs: 40,
    maxAttempts: 1_000,
    logger,
    onDelivered: (e) => delivered.push(e.id),
    metrics: { ...noopDeliveryMetrics, failed: (kind) => failures.push(kind) },
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
    // Tried and refused several times.
    await until('three attempts failed', () => failures.length >= 3, { everyMs: 10 });
    assert.deepEqual(new Set(failures), new Set(['sink']), 'each attempt failed at the sink');
    assert.match(warned[0] ?? '', /ECONNREFUSED/, `the attempt was refused:\n${warned.join('\n')}`);
    assert.equal(delivered.length, 0, 'nothing is delivered while the receiver refuses connections');
    assert.equal(
      receiver.requests.filter((r) => r.headers['x-raven-event-id'] !== undefined).length,
      0,
      'no request reached the receiver: each attempt was refused',
    );
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

test('a failing receiver is logged without the credentials, path or query of its URL', async () => {
  const receiver = await HttpReceiver.start();
  const dispatcher = new Agent();
  const lines: string[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: (fields, msg) => lines.push(JSON.stringify({ msg, ...fields })),
    warn: (fields, msg) => lines.push(JSON.stringify({ msg, ...fields })),
    error: (fields, msg) => lines.push(JSON.stringify({ msg, ...fields })),
    child: () => logger,
  };
  const url = `http://raven:hunter2@127.0.0.1:${receiver.port}/hooks/T0/B0/s3cr3tpath?token=q5ecret`;
  const d = new SinkDelivery(new WebhookSink({ name: 'hook', url, dispatcher }), {
    initialBackoffMs: 10,
    maxBackoffMs: 20,
    maxAttempts: 1_000,
    logger,
  });
  try {
    receiver.fallback = { status: 503, body: 'busy' };
    d.enqueue(sampleEvent({ name: 'a', id: 'a#1' }));
    await receiver.waitForRequests(2);
    await receiver.down();
    await delay(100);
    receiver.fallback = { status: 200 };
    await receiver.up();
    assert.equal((await d.close(10_000)).left, 0);
    const warned = lines.filter((l) => l.includes('delivery failed; retrying'));
    assert.ok(warned.length >= 1, `a warn line: ${lines.join('\n')}`);
    assert.match(warned[0] ?? '', /503/);
    assert.ok(lines.some((l) => l.includes('delivering again')));
    for (const secret of ['hunter2', 'raven:', 's3cr3tpath', 'q5ecret', 'T0/B0'])
      assert.ok(
        !lines.some((l) => l.includes(secret)),
        `"${secret}" must not be logged:\n${lines.join('\n')}`,
      );
  } finally {
    d.destroy();
    await receiver.close();
    await dispatcher.close();
  }
});
