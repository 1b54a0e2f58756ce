import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Agent } from 'undici';
import { SinkHttpError } from '../../../../src/raven/sinks/sink-http-error.js';
import { WebhookSink } from '../../../../src/raven/sinks/webhook-sink.js';
import { verifyWebhook } from '../../../../src/raven/sinks/webhook-signature.js';
import { FakeClock } from '../../../../src/testing/fake-clock.js';
import { HttpReceiver } from '../../../harness/http-receiver.js';
import { sampleEvent } from './fixtures.js';

let receiver: HttpReceiver;
const dispatcher = new Agent({ connectTimeout: 2_000 });
const signal = new AbortController().signal;
const clock = new FakeClock(1_714_564_800_000);

before(async () => {
  receiver = await HttpReceiver.start();
});
beforeEach(() => {
  receiver.requests.length = 0;
  receiver.fallback = { status: 200 };
});
after(async () => {
  await receiver.close();
  await dispatcher.close();
});

function sink(extra: Partial<ConstructorParameters<typeof WebhookSink>[0]> = {}): WebhookSink {
  return new WebhookSink({
    name: 'hook',
    url: receiver.url('/hooks/raven?token=s3cr3t'),
    dispatcher,
    clock,
    ...extra,
  });
}

test('posts the change event as JSON with its id and a timestamp', async () => {
  const event = sampleEvent();
  await sink({ headers: { authorization: 'Bearer abc' } }).deliver(event, signal);
  const [req] = await receiver.waitForRequests(1);
  assert.ok(req);
  assert.equal(req.method, 'POST');
  assert.equal(req.path, '/hooks/raven?token=s3cr3t');
  assert.equal(req.headers['content-type'], 'application/json');
  assert.equal(req.headers['x-raven-event-id'], event.id);
  assert.equal(req.headers['x-raven-timestamp'], '1714564800');
  assert.equal(req.headers.authorization, 'Bearer abc');
  assert.equal(req.headers['x-raven-signature'], undefined);
  assert.deepEqual(req.json, event);
  assert.equal(req.raw, JSON.stringify(event));
});

test('with a secret the signature is an HMAC-SHA256 of timestamp, dot and exact body', async () => {
  await sink({ secret: 'shh' }).deliver(sampleEvent(), signal);
  const [req] = await receiver.waitForRequests(1);
  assert.ok(req);
  const timestamp = String(req.headers['x-raven-timestamp']);
  const expected = `sha256=${createHmac('sha256', 'shh').update(`${timestamp}.${req.raw}`).digest('hex')}`;
  const given = String(req.headers['x-raven-signature']);
  assert.ok(timingSafeEqual(Buffer.from(given), Buffer.from(expected)));
  const check = {
    secret: 'shh',
    timestamp,
    body: req.raw,
    signature: given,
    nowSeconds: Number(timestamp) + 10,
  };
  assert.equal(verifyWebhook(check), true);
  assert.equal(verifyWebhook({ ...check, body: `${req.raw} ` }), false, 'a changed body fails');
  assert.equal(verifyWebhook({ ...check, secret: 'other' }), false, 'another secret fails');
  assert.equal(
    verifyWebhook({ ...check, nowSeconds: Number(timestamp) + 301 }),
    false,
    'an old request fails',
  );
});

test('408, 429 and 5xx are retryable; other 4xx are not', async () => {
  for (const [status, retryable] of [
    [408, true],
    [429, true],
    [500, true],
    [503, true],
    [400, false],
    [401, false],
    [404, false],
    [410, false],
  ] as const) {
    receiver.reply({ status, body: 'nope' });
    await assert.rejects(sink().deliver(sampleEvent(), signal), (err) => {
      assert.ok(err instanceof SinkHttpError);
      assert.equal(err.retryable, retryable, `status ${status}`);
      assert.equal(err.statusCode, status);
      return true;
    });
  }
  receiver.assertConsumed();
});

test('Retry-After in seconds or as a date is carried on the error', async () => {
  receiver.reply(
    { status: 429, headers: { 'retry-after': '7' } },
    { status: 503, headers: { 'retry-after': new Date(clock.now() + 30_000).toUTCString() } },
  );
  await assert.rejects(
    sink().deliver(sampleEvent(), signal),
    (err) => err instanceof SinkHttpError && err.retryAfterMs === 7_000,
  );
  await assert.rejects(
    sink().deliver(sampleEvent(), signal),
    (err) => err instanceof SinkHttpError && err.retryAfterMs === 30_000,
  );
  receiver.assertConsumed();
});

test('errors show the receiver as scheme://host/… without the path, token or secret', async () => {
  receiver.reply({ status: 500, body: 'boom' });
  await assert.rejects(sink({ secret: 'shh' }).deliver(sampleEvent(), signal), (err) => {
    assert.ok(err instanceof Error);
    assert.match(
      err.message,
      new RegExp(`POST http://127\\.0\\.0\\.1:${receiver.port}/… answered 500: boom`),
    );
    assert.doesNotMatch(err.message, /s3cr3t|hooks\/raven|shh/);
    return true;
  });
});

test('a receiver that is down is a retryable failure, and delivery works once it is back', async () => {
  await receiver.down();
  await assert.rejects(sink().deliver(sampleEvent(), signal), (err) => {
    assert.ok(err instanceof SinkHttpError);
    assert.equal(err.retryable, true);
    assert.equal(err.statusCode, undefined);
    // A kept-alive socket is cut first; a new connection is refused.
    assert.match(err.message, /ECONNREFUSED|connection closed before an answer/);
    return true;
  });
  await receiver.up();
  await sink().deliver(sampleEvent(), signal);
  assert.equal((await receiver.waitForRequests(1)).length, 1);
});

test('a receiver slower than the timeout is a retryable failure', async () => {
  // The client checks timeouts about once a second, so the answer comes well after that.
  receiver.reply({ status: 200, delayMs: 2_500 });
  await assert.rejects(sink({ timeoutMs: 100 }).deliver(sampleEvent(), signal), (err) => {
    assert.ok(err instanceof SinkHttpError);
    assert.equal(err.retryable, true);
    assert.match(err.message, /no answer within 100 ms/);
    return true;
  });
});

test('headers Raven sets cannot be configured', () => {
  assert.throws(() => sink({ headers: { 'X-Raven-Signature': 'forged' } }), /sinks\.hook\.headers/);
  assert.throws(() => sink({ headers: { 'Content-Type': 'text/plain' } }), /set by Raven/);
});

test('an invalid URL is a config error that does not echo the URL', () => {
  assert.throws(
    () => new WebhookSink({ name: 'hook', url: 'not a url with token xyz' }),
    (err) => err instanceof Error && /sinks\.hook\.url/.test(err.message) && !err.message.includes('xyz'),
  );
});
