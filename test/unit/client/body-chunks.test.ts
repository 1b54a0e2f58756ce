import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { bodyChunks, HIGH_WATER_BYTES } from '../../../src/client/body-chunks.js';

const wrap = (err: unknown): Error => new Error(`wrapped: ${(err as Error).message}`);
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('chunks a slow consumer has not taken yet arrive one by one, never joined', async () => {
  const body = new PassThrough();
  const iterator = bodyChunks(body, wrap)[Symbol.asyncIterator]();
  const written = ['{"a":1}\n', '{"b":', '2}\n', '{"c":3}\n'].map((s) => Buffer.from(s));
  for (const chunk of written) body.write(chunk);
  body.end();
  await tick();
  const seen: string[] = [];
  for (let r = await iterator.next(); r.done !== true; r = await iterator.next())
    seen.push(Buffer.from(r.value).toString());
  assert.deepEqual(seen, ['{"a":1}\n', '{"b":', '2}\n', '{"c":3}\n']);
});

test('a body is paused while more than the high-water mark waits, and resumes as the consumer drains', async () => {
  const body = new PassThrough({ highWaterMark: 1 });
  const iterator = bodyChunks(body, wrap)[Symbol.asyncIterator]();
  const chunk = Buffer.alloc(256 * 1024, 0x61);
  const count = Math.ceil((2 * HIGH_WATER_BYTES) / chunk.length) + 2;
  for (let i = 0; i < count; i++) body.write(chunk);
  await tick();
  assert.equal(body.isPaused(), true, 'paused once the queue passed the high-water mark');
  let taken = 0;
  while (body.isPaused()) {
    const r = await iterator.next();
    assert.equal(r.done, false);
    taken++;
  }
  assert.ok(taken > 0 && taken < count, `resumed after ${taken} of ${count} chunks were taken`);
  body.end();
  for (let r = await iterator.next(); r.done !== true; r = await iterator.next()) taken++;
  assert.equal(taken, count, 'every chunk delivered');
});

test('what arrived before a failure is delivered, then the failure, as the mapping made it', async () => {
  const body = new PassThrough();
  const iterator = bodyChunks(body, wrap)[Symbol.asyncIterator]();
  body.write(Buffer.from('first\n'));
  await tick();
  body.destroy(new Error('socket hang up'));
  await tick();
  const first = await iterator.next();
  assert.equal(Buffer.from(first.value as Uint8Array).toString(), 'first\n');
  await assert.rejects(iterator.next(), /wrapped: socket hang up/);
});

test('a consumer waiting for a chunk gets the failure when the body breaks', async () => {
  const body = new PassThrough();
  const iterator = bodyChunks(body, wrap)[Symbol.asyncIterator]();
  const pending = iterator.next();
  body.destroy(new Error('reset'));
  await assert.rejects(pending, /wrapped: reset/);
});

test('a body closed without an end is a failure, not a clean end', async () => {
  const body = new PassThrough();
  const iterator = bodyChunks(body, wrap)[Symbol.asyncIterator]();
  const pending = iterator.next();
  body.destroy();
  await assert.rejects(pending, /wrapped: the response was closed/);
});

test('a consumer that stops early destroys the body', async () => {
  const body = new PassThrough();
  body.write(Buffer.from('x'));
  for await (const chunk of bodyChunks(body, wrap)) {
    assert.equal(chunk.length, 1);
    break;
  }
  assert.equal(body.destroyed, true);
});
