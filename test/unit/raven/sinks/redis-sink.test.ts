/**
 * The Redis Streams sink against a real redis-server (Debian's package, started on loopback by the
 * harness): the shared sink contract, idempotent appends, the bounded length, and how failures
 * are classified.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SinkError } from '../../../../src/errors/raven-error.js';
import { gapNotice } from '../../../../src/raven/model/gap-notice.js';
import { RedisSink } from '../../../../src/raven/sinks/redis-sink.js';
import { RedisServer } from '../../../harness/redis-server.js';
import { sinkContract, type SinkUnderTest } from './sink-contract.js';
import { sampleEvent } from './fixtures.js';
import { until } from '../../../harness/until.js';

let server: RedisServer;
let streams = 0;

before(async () => {
  server = await RedisServer.start();
});
after(async () => {
  await server.stop();
});

/** A stream key of its own per sink under test, so tests never see each other's entries. */
const freshStream = (): string => `test:${++streams}`;

async function redisSink(kind: 'healthy' | 'down' | 'refused'): Promise<SinkUnderTest> {
  const stream = freshStream();
  // A string where the stream should be: every XADD answers WRONGTYPE, whatever the retry.
  if (kind === 'refused') await server.using(0, (r) => r.set(stream, 'not a stream'));
  const url = kind === 'down' ? 'redis://127.0.0.1:1' : server.url();
  const sink = new RedisSink({ name: 'stream', url, stream, timeoutMs: 5000 });
  return {
    sink,
    received: async () =>
      kind === 'refused' ? [] : (await server.entries(stream)).map((fields) => fields.event ?? ''),
    cleanup: () => Promise.resolve(),
  };
}

sinkContract('redis', {
  healthy: () => redisSink('healthy'),
  transient: () => redisSink('down'),
  permanent: () => redisSink('refused'),
});

describe('redis sink', () => {
  const signal = new AbortController().signal;

  test('appends each change once however often it is delivered', async () => {
    const stream = freshStream();
    const sink = new RedisSink({ name: 'stream', url: server.url(), stream });
    try {
      const events = Array.from({ length: 100 }, (_, i) => sampleEvent({ name: `obj-${i}` }));
      await Promise.all(events.map((e) => sink.deliver(e, signal)));
      await Promise.all(events.map((e) => sink.deliver(e, signal)));
      // A tombstone carries the object's last resourceVersion: a change of its own, not a repeat.
      await sink.deliver(sampleEvent({ name: 'obj-0', type: 'deleted', tombstone: true }), signal);
      const entries = await server.entries(stream);
      assert.equal(entries.length, 101);
      assert.deepEqual(
        entries.slice(0, 100).map((e) => e.id),
        events.map((e) => e.id),
      );
    } finally {
      await sink.close();
    }
  });

  test('a batch that failed part-way is delivered again without repeating what it had appended', async () => {
    const stream = freshStream();
    const sink = new RedisSink({ name: 'stream', url: server.url(), stream });
    try {
      const events = ['a', 'b', 'c', 'd', 'e'].map((name) => sampleEvent({ name }));
      // The third change's de-duplication key is a hash: the script fails there (WRONGTYPE), after
      // appending the first two.
      const broken = `${stream}:raven:last:uid-c`;
      await server.using(0, (r) => r.hset(broken, 'x', '1'));
      const first = await Promise.allSettled(events.map((e) => sink.deliver(e, signal)));
      assert.deepEqual(
        first.map((r) => r.status),
        ['rejected', 'rejected', 'rejected', 'rejected', 'rejected'],
        'the batch fails whole',
      );
      assert.deepEqual(
        (await server.entries(stream)).map((e) => e.id),
        events.slice(0, 2).map((e) => e.id),
      );
      await server.using(0, (r) => r.del(broken));
      await Promise.all(events.map((e) => sink.deliver(e, signal)));
      assert.deepEqual(
        (await server.entries(stream)).map((e) => e.id),
        events.map((e) => e.id),
      );
    } finally {
      await sink.close();
    }
  });

  test('a replayed older change of an object is skipped, a newer one appended', async () => {
    const stream = freshStream();
    const sink = new RedisSink({ name: 'stream', url: server.url(), stream });
    try {
      const v = (rv: string): ReturnType<typeof sampleEvent> =>
        sampleEvent({ name: 'web', resourceVersion: rv, id: `deploys:uid-web:${rv}:modified` });
      for (const rv of ['9', '10', '9', '10', '100']) await sink.deliver(v(rv), signal);
      assert.deepEqual(
        (await server.entries(stream)).map(
          (e) => (JSON.parse(e.event ?? '{}') as { resourceVersion: string }).resourceVersion,
        ),
        ['9', '10', '100'],
      );
    } finally {
      await sink.close();
    }
  });

  test('records each gap notice once', async () => {
    const stream = freshStream();
    const sink = new RedisSink({ name: 'stream', url: server.url(), stream });
    try {
      const notice = gapNotice({
        watcher: 'deploys',
        resource: sampleEvent().resource,
        reason: 'relist',
        fromResourceVersion: '10',
        toResourceVersion: '20',
        since: undefined,
        time: '2024-05-01T12:00:00.000Z',
      });
      await sink.deliver(notice, signal);
      await sink.deliver(notice, signal);
      assert.deepEqual(
        (await server.entries(stream)).map((e) => [e.type, e.id]),
        [['gap', notice.id]],
      );
    } finally {
      await sink.close();
    }
  });

  test('keeps the stream near maxLen', async () => {
    const stream = freshStream();
    const sink = new RedisSink({ name: 'stream', url: server.url(), stream, maxLen: 100 });
    try {
      const events = Array.from({ length: 1000 }, (_, i) => sampleEvent({ name: `obj-${i}` }));
      await Promise.all(events.map((e) => sink.deliver(e, signal)));
      const length = await server.using(0, (r) => r.xlen(stream));
      // MAXLEN ~ trims whole radix-tree nodes (100 entries each by default): at least maxLen, never far more.
      assert.ok(length >= 100 && length < 300, `stream length ${length}`);
    } finally {
      await sink.close();
    }
  });

  test('a server that went away is a retryable failure, and the sink appends again once it is back', async () => {
    const stream = freshStream();
    const sink = new RedisSink({ name: 'stream', url: server.url(), stream, timeoutMs: 2000 });
    try {
      await sink.deliver(sampleEvent({ name: 'before' }), signal);
      await server.down();
      await assert.rejects(sink.deliver(sampleEvent({ name: 'during' }), signal), (err) => {
        assert.ok(err instanceof SinkError);
        assert.equal(err.retryable, true);
        return true;
      });
      await server.up();
      // The client reconnects on its own; until it has, an append fails (retryable) like above.
      await until('an append after the reconnect', async () => {
        try {
          await sink.deliver(sampleEvent({ name: 'during' }), signal);
          return true;
        } catch (err) {
          assert.ok(err instanceof SinkError && err.retryable, String(err));
          return false;
        }
      });
      assert.deepEqual(
        (await server.entries(stream)).map((e) => (JSON.parse(e.event ?? '{}') as { name: string }).name),
        ['before', 'during'],
      );
    } finally {
      await sink.close();
    }
  });
});
