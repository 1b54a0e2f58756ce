/**
 * The NATS JetStream sink against a real nats-server (Debian's package, started on loopback by the
 * harness): the shared sink contract, message ids and JetStream's de-duplication, subjects from
 * the template, and how failures are classified.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SinkError } from '../../../../src/errors/raven-error.js';
import { sleep, systemClock } from '../../../../src/util/clock.js';
import { NatsSink } from '../../../../src/raven/sinks/nats-sink.js';
import { subjectTemplateProblem } from '../../../../src/raven/model/template-check.js';
import { natsSubject, streamSubjects } from '../../../../src/raven/sinks/nats-subject.js';
import { NatsServer } from '../../../harness/nats-server.js';
import { sinkContract, type SinkUnderTest } from './sink-contract.js';
import { sampleEvent } from './fixtures.js';

let server: NatsServer;
/** A server whose payload limit is below a change event's size: every publish is refused for good. */
let small: NatsServer;
let streams = 0;

before(async () => {
  server = await NatsServer.start();
  small = await NatsServer.start({ maxPayload: 256 });
});
after(async () => {
  await server.stop();
  await small.stop();
});

/** A stream (and subject prefix) of its own per sink under test, so tests never see each other's messages. */
function freshStream(): { stream: string; subject: string } {
  const n = ++streams;
  return { stream: `T${n}`, subject: `t${n}.{{resource.kind}}.{{namespace}}` };
}

function natsSink(kind: 'healthy' | 'down' | 'refused'): Promise<SinkUnderTest> {
  const { stream, subject } = freshStream();
  const url = kind === 'down' ? 'nats://127.0.0.1:1' : kind === 'refused' ? small.url : server.url;
  const sink = new NatsSink({ name: 'bus', servers: [url], stream, subject, timeoutMs: 5000 });
  return Promise.resolve({
    sink,
    received: async () => (await server.messages(stream)).map((m) => JSON.stringify(m.json)),
    cleanup: () => Promise.resolve(),
  });
}

sinkContract('nats', {
  healthy: () => natsSink('healthy'),
  transient: () => natsSink('down'),
  permanent: () => natsSink('refused'),
});

describe('nats sink', () => {
  const signal = new AbortController().signal;

  test('publishes each change with its id as Nats-Msg-Id, so JetStream stores a repeat once', async () => {
    const { stream, subject } = freshStream();
    const sink = new NatsSink({ name: 'bus', servers: [server.url], stream, subject });
    try {
      const events = Array.from({ length: 100 }, (_, i) => sampleEvent({ name: `obj-${i}` }));
      await Promise.all(events.map((e) => sink.deliver(e, signal)));
      await Promise.all(events.map((e) => sink.deliver(e, signal)));
      const stored = await server.messages(stream);
      assert.equal(stored.length, 100);
      assert.deepEqual(stored.map((m) => m.msgId).sort(), events.map((e) => e.id).sort());
    } finally {
      await sink.close();
    }
  });

  test('subjects come from the template, each value one token', async () => {
    const { stream } = freshStream();
    const sink = new NatsSink({
      name: 'bus',
      servers: [server.url],
      stream,
      subject: `${stream.toLowerCase()}.prod-eu.{{resource.kind}}.{{namespace}}`,
    });
    try {
      await sink.deliver(sampleEvent({ name: 'web' }), signal);
      await sink.deliver(sampleEvent({ name: 'all', namespace: undefined }), signal);
      const stored = await server.messages(stream);
      assert.deepEqual(
        stored.map((m) => m.subject),
        [
          `${stream.toLowerCase()}.prod-eu.Deployment.default`,
          `${stream.toLowerCase()}.prod-eu.Deployment._`,
        ],
      );
    } finally {
      await sink.close();
    }
  });

  test('a value with dots, spaces or wildcards stays one subject token', () => {
    const event = sampleEvent({ namespace: 'a.b c*>' });
    assert.equal(natsSubject('raven.{{namespace}}.{{name}}', event), 'raven.a_b_c__.web');
  });

  test('the stream Raven creates captures every subject the template makes', () => {
    assert.deepEqual(streamSubjects('raven.prod.{{resource.kind}}.{{namespace}}'), ['raven.prod.>']);
    assert.deepEqual(streamSubjects('{{watcher}}.changes'), ['>']);
    assert.deepEqual(streamSubjects('raven.all'), ['raven.all']);
  });

  test('a subject template with an empty token, a wildcard or an unknown field is refused with the reason', () => {
    assert.match(subjectTemplateProblem('raven..{{name}}') ?? '', /no empty token/);
    assert.match(subjectTemplateProblem('raven.*.{{name}}') ?? '', /wildcards/);
    assert.match(subjectTemplateProblem('raven.{{kind}}') ?? '', /unknown field "kind"/);
    assert.equal(subjectTemplateProblem('raven.{{resource.kind}}.{{namespace}}'), undefined);
    assert.throws(
      () => new NatsSink({ name: 'bus', servers: [server.url], subject: 'raven.>' }),
      /sinks\.bus\.subject: a subject may not contain spaces or the wildcards/,
    );
  });

  test('a server that went away is a retryable failure, and the sink publishes again once it is back', async () => {
    const { stream, subject } = freshStream();
    const sink = new NatsSink({ name: 'bus', servers: [server.url], stream, subject, timeoutMs: 2000 });
    try {
      await sink.deliver(sampleEvent({ name: 'before' }), signal);
      await server.down();
      await assert.rejects(sink.deliver(sampleEvent({ name: 'during' }), signal), (err) => {
        assert.ok(err instanceof SinkError);
        assert.equal(err.retryable, true);
        return true;
      });
      await server.up();
      // The client reconnects on its own; until it has, a publish fails (retryable) like above.
      // Tried every 100 ms; the bound is a safety net against a sink that never recovers.
      for (let attempt = 1; ; attempt++) {
        try {
          await sink.deliver(sampleEvent({ name: 'during' }), signal);
          break;
        } catch (err) {
          assert.ok(err instanceof SinkError && err.retryable, String(err));
          assert.ok(attempt < 600, `still failing after ${attempt} attempts: ${String(err)}`);
        }
        await sleep(systemClock, 100, signal);
      }
      const stored = await server.messages(stream);
      assert.deepEqual(
        stored.map((m) => (m.json as { name: string }).name),
        ['before', 'during'],
      );
    } finally {
      await sink.close();
    }
  });
});
