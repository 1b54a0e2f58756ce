/**
 * The Loki sink against a real Loki (built from the Go module proxy and started on loopback by the
 * harness): the shared sink contract, stream labels, a change pushed twice stored once (read back
 * with query_range), order per object, and how refusals are classified.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SinkError } from '../../../../src/errors/raven-error.js';
import { gapNotice } from '../../../../src/raven/model/gap-notice.js';
import { LokiSink } from '../../../../src/raven/sinks/loki-sink.js';
import type { Sink } from '../../../../src/raven/sinks/sink.js';
import { LokiServer } from '../../../harness/loki-server.js';
import { sinkContract, type SinkUnderTest } from './sink-contract.js';
import { sampleEvent } from './fixtures.js';

let server: LokiServer;
let runs = 0;

before(async () => {
  server = await LokiServer.start();
});
after(async () => {
  await server.stop();
});

/** A time a minute before the test started, plus `ms`: recent enough for Loki's ingester window. */
const base = Date.now() - 60_000;
const recent = (ms: number): string => new Date(base + ms).toISOString();

/** A static label of its own per sink under test, so tests never see each other's entries. */
const freshRun = (): string => `r${++runs}`;

function lokiSink(kind: 'healthy' | 'down' | 'refused'): Promise<SinkUnderTest> {
  const run = freshRun();
  // A Loki behind a path prefix it does not serve answers 404: no retry brings the push path there.
  const url =
    kind === 'down' ? 'http://127.0.0.1:1' : kind === 'refused' ? `${server.url}/not-loki` : server.url;
  const loki = new LokiSink({ name: 'logs', url, labels: { run }, timeoutMs: 5000 });
  // The contract's sample changes are stamped 2024-05-01. Loki accepts entries that old (204) but
  // its queries do not return them while they sit in the ingester, so the contract's changes are
  // stamped a minute ago here, a millisecond apart in the order given.
  let stamped = 0;
  const sink: Sink = {
    name: loki.name,
    deliver: (record, signal) => loki.deliver({ ...record, time: recent(stamped++) }, signal),
    close: () => loki.close(),
  };
  return Promise.resolve({
    sink,
    received: async () =>
      kind === 'healthy' ? (await server.entries(`{run="${run}"}`)).map((e) => e.line) : [],
    cleanup: () => Promise.resolve(),
  });
}

sinkContract('loki', {
  healthy: () => lokiSink('healthy'),
  transient: () => lokiSink('down'),
  permanent: () => lokiSink('refused'),
});

describe('loki sink', () => {
  const signal = new AbortController().signal;

  test('labels each stream with watcher, resource, namespace and type, never name or uid', async () => {
    const run = freshRun();
    const sink = new LokiSink({ name: 'logs', url: server.url, labels: { run, cluster: 'prod' } });
    try {
      const web = sampleEvent({ name: 'web', time: recent(0) });
      await sink.deliver(web, signal);
      await sink.deliver(
        sampleEvent({ name: 'node-1', namespace: undefined, type: 'added', time: recent(1) }),
        signal,
      );
      const entries = await server.entries(`{run="${run}"}`);
      assert.deepEqual(
        entries.map((e) => e.labels),
        [
          {
            run,
            cluster: 'prod',
            watcher: 'deploys',
            resource: 'deployments.apps',
            namespace: 'default',
            type: 'modified',
          },
          { run, cluster: 'prod', watcher: 'deploys', resource: 'deployments.apps', type: 'added' },
        ],
      );
      const first = entries[0];
      assert.ok(first);
      assert.equal(first.timestamp, `${Date.parse(web.time)}000000`);
      assert.deepEqual(JSON.parse(first.line), JSON.parse(JSON.stringify(web)));
    } finally {
      await sink.close();
    }
  });

  test('a change pushed again, alone or in another batch, is stored once', async () => {
    const run = freshRun();
    const sink = new LokiSink({ name: 'logs', url: server.url, labels: { run } });
    try {
      const events = Array.from({ length: 100 }, (_, i) =>
        sampleEvent({
          name: `obj-${i}`,
          time: recent(100 + i),
        }),
      );
      await Promise.all(events.map((e) => sink.deliver(e, signal)));
      // The same changes again, batched differently, and one by one.
      await Promise.all(events.slice(50).map((e) => sink.deliver(e, signal)));
      for (const e of events.slice(0, 10)) await sink.deliver(e, signal);
      const entries = await server.entries(`{run="${run}"}`);
      assert.equal(entries.length, 100);
      assert.deepEqual(
        entries.map((e) => (JSON.parse(e.line) as { id: string }).id),
        events.map((e) => e.id),
      );
      // Still once after Loki restarts and replays its write-ahead log.
      await server.down();
      await server.up();
      await Promise.all(events.slice(0, 20).map((e) => sink.deliver(e, signal)));
      assert.equal((await server.entries(`{run="${run}"}`)).length, 100);
    } finally {
      await sink.close();
    }
  });

  test("one object's changes come back in the order they were made", async () => {
    const run = freshRun();
    const sink = new LokiSink({ name: 'logs', url: server.url, labels: { run } });
    try {
      const start = Date.parse(recent(1000));
      const changes = Array.from({ length: 20 }, (_, i) =>
        sampleEvent({
          resourceVersion: String(100 + i),
          id: `deploys:uid-web:${100 + i}:modified`,
          time: new Date(start + i * 7).toISOString(),
        }),
      );
      for (const change of changes) await sink.deliver(change, signal);
      await sink.deliver(
        sampleEvent({ type: 'deleted', resourceVersion: '120', time: new Date(start + 500).toISOString() }),
        signal,
      );
      const got = (await server.entries(`{run="${run}"}`)).map(
        (e) => JSON.parse(e.line) as { type: string; resourceVersion: string },
      );
      assert.deepEqual(
        got.map((e) => `${e.type}:${e.resourceVersion}`),
        [...changes.map((c) => `modified:${c.resourceVersion ?? ''}`), 'deleted:120'],
      );
    } finally {
      await sink.close();
    }
  });

  test('records a gap notice with the type label gap', async () => {
    const run = freshRun();
    const sink = new LokiSink({ name: 'logs', url: server.url, labels: { run } });
    try {
      const notice = gapNotice({
        watcher: 'deploys',
        resource: { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' },
        reason: 'relist',
        fromResourceVersion: '10',
        toResourceVersion: '20',
        since: undefined,
        time: recent(2000),
      });
      await sink.deliver(notice, signal);
      await sink.deliver(notice, signal);
      const entries = await server.entries(`{run="${run}", type="gap"}`);
      assert.equal(entries.length, 1);
      assert.equal((JSON.parse(entries[0]?.line ?? '{}') as { id: string }).id, notice.id);
    } finally {
      await sink.close();
    }
  });

  test('a line Loki refuses (too long) fails alone, not retryable; the rest of its batch is stored', async () => {
    const run = freshRun();
    const sink = new LokiSink({ name: 'logs', url: server.url, labels: { run } });
    try {
      const big = sampleEvent({ name: 'big', time: recent(3000) });
      big.object = { ...big.object, data: { blob: 'x'.repeat(300 * 1024) } } as typeof big.object;
      const small = ['a', 'b', 'c'].map((name, i) => sampleEvent({ name, time: recent(3001 + i) }));
      const results = await Promise.allSettled([big, ...small].map((e) => sink.deliver(e, signal)));
      const refused = results[0];
      assert.ok(refused?.status === 'rejected', 'the long line is refused');
      const reason: unknown = refused.reason;
      assert.ok(reason instanceof SinkError, String(reason));
      assert.equal(reason.retryable, false);
      assert.match(reason.message, /answered 400/);
      assert.deepEqual(
        results.slice(1).map((r) => r.status),
        ['fulfilled', 'fulfilled', 'fulfilled'],
      );
      const names = (await server.entries(`{run="${run}"}`)).map(
        (e) => (JSON.parse(e.line) as { name: string }).name,
      );
      assert.deepEqual(names.sort(), ['a', 'b', 'c']);
    } finally {
      await sink.close();
    }
  });

  test('refuses labels that would replace its own or are not valid label names', () => {
    assert.throws(
      () => new LokiSink({ name: 'logs', url: server.url, labels: { namespace: 'x' } }),
      /label "namespace" is set by Raven/,
    );
    assert.throws(
      () => new LokiSink({ name: 'logs', url: server.url, labels: { 'team-name': 'x' } }),
      /label name "team-name" is not valid/,
    );
    assert.throws(
      () => new LokiSink({ name: 'logs', url: server.url, username: 'u', password: 'p', bearerToken: 't' }),
      /not both/,
    );
  });
});
