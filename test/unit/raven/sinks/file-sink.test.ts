import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, open, readFile, readdir, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSink } from '../../../../src/raven/sinks/file-sink.js';
import type { ChangeEvent } from '../../../../src/raven/model/change-event.js';
import { SinkError } from '../../../../src/errors/raven-error.js';
import { sampleEvent } from './fixtures.js';

let dir = '';
const signal = new AbortController().signal;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'raven-file-sink-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function lines(path: string): Promise<ChangeEvent[]> {
  const text = await readFile(path, 'utf8');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ChangeEvent);
}

const lineBytes = Buffer.byteLength(`${JSON.stringify(sampleEvent({ name: 'n0' }))}\n`);

test('each event is appended as one JSON line, creating the directory', async () => {
  const path = join(dir, 'nested', 'events.jsonl');
  const sink = new FileSink({ name: 'file', path });
  await sink.deliver(sampleEvent({ name: 'a' }), signal);
  await sink.deliver(sampleEvent({ name: 'b' }), signal);
  await sink.close();
  assert.deepEqual(
    (await lines(path)).map((e) => e.name),
    ['a', 'b'],
  );
  assert.deepEqual((await lines(path))[0], sampleEvent({ name: 'a' }));
});

test('the file rotates by size and keeps maxFiles rotated files, newest as .1', async () => {
  const path = join(dir, 'events.jsonl');
  const sink = new FileSink({ name: 'file', path, maxBytes: lineBytes * 2, maxFiles: 2, fsync: 'rotate' });
  for (let i = 0; i < 7; i++) await sink.deliver(sampleEvent({ name: `n${i}` }), signal);
  await sink.close();
  assert.deepEqual((await readdir(dir)).sort(), ['events.jsonl', 'events.jsonl.1', 'events.jsonl.2']);
  assert.deepEqual(
    (await lines(path)).map((e) => e.name),
    ['n6'],
  );
  assert.deepEqual(
    (await lines(`${path}.1`)).map((e) => e.name),
    ['n4', 'n5'],
  );
  assert.deepEqual(
    (await lines(`${path}.2`)).map((e) => e.name),
    ['n2', 'n3'],
  );
});

test('after a restart rotation continues from the size on disk', async () => {
  const path = join(dir, 'events.jsonl');
  const first = new FileSink({ name: 'file', path, maxBytes: lineBytes * 2, maxFiles: 3 });
  await first.deliver(sampleEvent({ name: 'n0' }), signal);
  await first.close();
  const second = new FileSink({ name: 'file', path, maxBytes: lineBytes * 2, maxFiles: 3 });
  await second.deliver(sampleEvent({ name: 'n1' }), signal);
  await second.deliver(sampleEvent({ name: 'n2' }), signal);
  await second.close();
  assert.deepEqual(
    (await lines(`${path}.1`)).map((e) => e.name),
    ['n0', 'n1'],
  );
  assert.deepEqual(
    (await lines(path)).map((e) => e.name),
    ['n2'],
  );
});

test('a line cut short by a crash is ended before appending, so later lines parse', async () => {
  const path = join(dir, 'events.jsonl');
  await writeFile(path, '{"half":');
  const sink = new FileSink({ name: 'file', path });
  await sink.deliver(sampleEvent(), signal);
  await sink.close();
  const text = await readFile(path, 'utf8');
  assert.equal(text, `{"half":\n${JSON.stringify(sampleEvent())}\n`);
});

test('concurrent deliveries are written whole, one after another', async () => {
  const path = join(dir, 'events.jsonl');
  const sink = new FileSink({ name: 'file', path, maxBytes: lineBytes * 3, maxFiles: 10 });
  await Promise.all(
    Array.from({ length: 20 }, (_, i) => sink.deliver(sampleEvent({ name: `n${i}` }), signal)),
  );
  await sink.close();
  const all: string[] = [];
  for (let n = 10; n >= 1; n--) {
    try {
      all.push(...(await lines(`${path}.${n}`)).map((e) => e.name));
    } catch {
      // fewer rotated files than the limit
    }
  }
  all.push(...(await lines(path)).map((e) => e.name));
  assert.deepEqual(
    all,
    Array.from({ length: 20 }, (_, i) => `n${i}`),
  );
});

/** Count FileHandle flushes to disk (and note when each finished) while `body` runs. */
async function countingSyncs(body: (syncs: string[]) => Promise<void>): Promise<void> {
  const probe = await open(join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe) as { sync: FileHandle['sync'] };
  await probe.close();
  const original = proto.sync;
  const syncs: string[] = [];
  proto.sync = async function (this: FileHandle) {
    await original.call(this);
    syncs.push('synced');
  };
  try {
    await body(syncs);
  } finally {
    proto.sync = original;
  }
}

test('deliveries that arrive together share one flush to disk, and each resolves only after it', () =>
  countingSyncs(async (syncs) => {
    const path = join(dir, 'events.jsonl');
    const sink = new FileSink({ name: 'file', path });
    await sink.deliver(sampleEvent({ name: 'first' }), signal);
    assert.deepEqual(syncs, ['synced']);
    await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        sink.deliver(sampleEvent({ name: `n${i}` }), signal).then(() => syncs.push(`resolved n${i}`)),
      ),
    );
    assert.deepEqual(syncs, ['synced', 'synced', 'resolved n0', 'resolved n1', 'resolved n2', 'resolved n3']);
    await sink.close();
    assert.deepEqual(
      (await lines(path)).map((e) => e.name),
      ['first', 'n0', 'n1', 'n2', 'n3'],
    );
  }));

test('a delivery aborted while it waits for the group is not written; the others are', async () => {
  const path = join(dir, 'events.jsonl');
  const sink = new FileSink({ name: 'file', path });
  const aborted = new AbortController();
  const delivered = [
    sink.deliver(sampleEvent({ name: 'a' }), signal),
    sink.deliver(sampleEvent({ name: 'b' }), aborted.signal),
    sink.deliver(sampleEvent({ name: 'c' }), signal),
  ];
  aborted.abort(new Error('stop'));
  const results = await Promise.allSettled(delivered);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  await sink.close();
  assert.deepEqual(
    (await lines(path)).map((e) => e.name),
    ['a', 'c'],
  );
});

test('a failed group write fails every line in it, retryable, and the next write tries again', async () => {
  const blocker = join(dir, 'not-a-dir');
  await writeFile(blocker, '');
  const sink = new FileSink({ name: 'file', path: join(blocker, 'events.jsonl') });
  const results = await Promise.allSettled(
    ['a', 'b', 'c'].map((name) => sink.deliver(sampleEvent({ name }), signal)),
  );
  for (const result of results) {
    if (result.status !== 'rejected') assert.fail('every line of the failed write fails');
    const reason: unknown = result.reason;
    assert.ok(reason instanceof SinkError && reason.retryable, String(reason));
  }
  await rm(blocker);
  await sink.deliver(sampleEvent({ name: 'd' }), signal);
  await sink.close();
  assert.deepEqual(
    (await lines(join(blocker, 'events.jsonl'))).map((e) => e.name),
    ['d'],
  );
});

test('bad options are config errors naming the field', () => {
  assert.throws(() => new FileSink({ name: 'f', path: join(dir, 'x'), maxBytes: 0 }), /sinks\.f\.maxBytes/);
  assert.throws(() => new FileSink({ name: 'f', path: join(dir, 'x'), maxFiles: -1 }), /sinks\.f\.maxFiles/);
});
