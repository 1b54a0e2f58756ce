import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { SinkError } from '../../../../src/errors/raven-error.js';
import { StdoutSink } from '../../../../src/raven/sinks/stdout-sink.js';
import { ATTRIBUTED_LINES, attributedEvent, sampleEvent } from './fixtures.js';

/** A stream that records what it is given, optionally as a terminal and with a tiny buffer. */
function captureStream(options: { tty?: boolean; highWaterMark?: number; slowMs?: number } = {}) {
  const chunks: string[] = [];
  let release: (() => void) | undefined;
  const stream = new Writable({
    highWaterMark: options.highWaterMark ?? 16_384,
    decodeStrings: false,
    write(chunk: string, _encoding, callback) {
      chunks.push(chunk);
      if (options.slowMs === undefined) callback();
      else release = () => callback();
    },
  }) as Writable & { isTTY?: boolean };
  if (options.tty === true) stream.isTTY = true;
  return { stream, text: () => chunks.join(''), release: () => release?.() };
}

const signal = new AbortController().signal;

test('on a pipe the default format is one JSON line per event', async () => {
  const { stream, text } = captureStream();
  const sink = new StdoutSink({ name: 'out', stream });
  await sink.deliver(sampleEvent(), signal);
  await sink.deliver(sampleEvent({ name: 'api' }), signal);
  const lines = text().trimEnd().split('\n');
  assert.equal(lines.length, 2);
  assert.deepEqual(JSON.parse(lines[0] ?? ''), sampleEvent());
  assert.equal((JSON.parse(lines[1] ?? '') as { name: string }).name, 'api');
});

test('on a terminal the default is readable text with the diff indented, coloured', async () => {
  const { stream, text } = captureStream({ tty: true });
  await new StdoutSink({ name: 'out', stream, env: {} }).deliver(sampleEvent(), signal);
  // eslint-disable-next-line no-control-regex
  assert.match(text(), /\x1b\[33mmodified\x1b\[0m/);
  // eslint-disable-next-line no-control-regex
  const plain = text().replace(/\x1b\[\d+m/g, '');
  assert.equal(plain, '2024-05-01T12:00:00.000Z modified Deployment default/web\n    spec.replicas: 2 → 3\n');
});

test('NO_COLOR turns colour off on a terminal', async () => {
  const { stream, text } = captureStream({ tty: true });
  await new StdoutSink({ name: 'out', stream, env: { NO_COLOR: '1' } }).deliver(sampleEvent(), signal);
  assert.equal(
    text(),
    '2024-05-01T12:00:00.000Z modified Deployment default/web\n    spec.replicas: 2 → 3\n',
  );
});

test('the format can be forced either way', async () => {
  const tty = captureStream({ tty: true });
  await new StdoutSink({ name: 'out', stream: tty.stream, format: 'json' }).deliver(sampleEvent(), signal);
  assert.equal(tty.text(), `${JSON.stringify(sampleEvent())}\n`);
  const pipe = captureStream();
  await new StdoutSink({ name: 'out', stream: pipe.stream, format: 'text' }).deliver(sampleEvent(), signal);
  assert.equal(
    pipe.text(),
    '2024-05-01T12:00:00.000Z modified Deployment default/web\n    spec.replicas: 2 → 3\n',
  );
});

test('a full stream holds delivery until it drains', async () => {
  const capture = captureStream({ highWaterMark: 1, slowMs: 1 });
  const sink = new StdoutSink({ name: 'out', stream: capture.stream, format: 'json' });
  let done = false;
  const delivering = sink.deliver(sampleEvent(), signal).then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(done, false, 'delivered before the stream took the line');
  capture.release();
  await delivering;
  assert.equal(done, true);
});

test('a closed stream is a non-retryable failure and a write error a retryable one', async () => {
  const closed = captureStream();
  closed.stream.destroy();
  await assert.rejects(
    new StdoutSink({ name: 'out', stream: closed.stream }).deliver(sampleEvent(), signal),
    (err) => err instanceof SinkError && !err.retryable,
  );
  const failing = new Writable({
    write(_chunk, _encoding, callback) {
      callback(new Error('EAGAIN'));
    },
  });
  await assert.rejects(
    new StdoutSink({ name: 'out', stream: failing }).deliver(sampleEvent(), signal),
    (err) => err instanceof SinkError && err.retryable,
  );
});

test('the text format names who made each change, as the CLI does', async () => {
  const { stream, text } = captureStream();
  await new StdoutSink({ name: 'out', stream, format: 'text' }).deliver(attributedEvent(), signal);
  assert.equal(
    text(),
    `2024-05-01T12:00:00.000Z modified Deployment default/web\n${ATTRIBUTED_LINES.map((l) => `    ${l}\n`).join('')}`,
  );
});
