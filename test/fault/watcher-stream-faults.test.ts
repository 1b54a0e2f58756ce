/**
 * The watcher over real sockets when the bytes of a stream misbehave: split at awkward places,
 * torn mid-object, stalled with the socket open, malformed, or nothing but bookmarks. The client
 * is the real one; the server plays a script and checks every request's query.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { WatcherEvent } from '../../src/watch/watcher-events.js';
import type { ScriptStep } from './scripted-server.js';
import {
  NAMESPACE,
  PODS,
  assertPlayed,
  bookmarkLine,
  errors,
  line,
  listBody,
  listQuery,
  pod,
  requestLog,
  startRun,
  watchQuery,
} from './watcher-harness.js';

/** Two-, three- and four-byte UTF-8 characters, so that some split points fall inside a character. */
const NOTE_A = 'naïve café — 日本語 🐝';
const NOTE_B = '𝄞 Ωmega ✓';

test('a watch stream split in two at every byte offset, mid UTF-8 character too, yields the same events', async (t) => {
  const first = 100_000;
  const baseOf = (stream: number): number => first + 10 * (stream + 1);
  // Small objects keep the number of streams down; the resourceVersions all have six digits, so
  // every stream has the same length.
  const object = (name: string, rv: string, note?: string): object => ({
    metadata: {
      name,
      namespace: NAMESPACE,
      ...(note === undefined ? {} : { annotations: { note } }),
      resourceVersion: rv,
    },
  });
  const sample = (stream: number): Buffer => {
    const rv = (n: number): string => String(baseOf(stream) + n);
    return Buffer.from(
      line('MODIFIED', object('a', rv(1), NOTE_A)) +
        line('ADDED', object('b', rv(2), NOTE_B)) +
        line('DELETED', object('b', rv(3))) +
        line('BOOKMARK', { metadata: { resourceVersion: rv(4) } }),
    );
  };
  const length = sample(0).length;
  const offsets = Array.from({ length: length - 1 }, (_, i) => i + 1);
  const inCharacter = offsets.filter((offset) => ((sample(0)[offset] ?? 0) & 0xc0) === 0x80);
  assert.ok(inCharacter.length >= 10, `${inCharacter.length} split points fall inside a character`);

  const resumeFrom = (stream: number): string =>
    stream === 0 ? String(first) : String(baseOf(stream - 1) + 4);
  // The client's stream() calls in order: the list first, then one per watch stream. The server
  // sends the second part of a stream only once the client has read the first, so every stream
  // reaches the decoder in two reads however busy the machine is (a delay would not promise that).
  const chunksPerStream: number[] = [];
  const firstChunks = new Map<number, { read: Promise<void>; resolve: () => void }>();
  const firstChunk = (call: number): { read: Promise<void>; resolve: () => void } => {
    let entry = firstChunks.get(call);
    if (entry === undefined) {
      let resolve = (): void => undefined;
      const read = new Promise<void>((r) => (resolve = r));
      entry = { read, resolve };
      firstChunks.set(call, entry);
    }
    return entry;
  };
  const streams: ScriptStep[] = offsets.map((offset, stream) => {
    const bytes = sample(stream);
    return {
      name: `split at byte ${offset}`,
      expect: { path: PODS, query: watchQuery(resumeFrom(stream)) },
      respond: {
        body: [
          bytes.subarray(0, offset),
          { until: () => firstChunk(1 + stream).read, data: bytes.subarray(offset) },
        ],
      },
    };
  });
  const run = await startRun(
    t,
    {
      name: 'split chunks',
      steps: [
        {
          name: 'list',
          expect: { path: PODS, query: listQuery({ limit: 500 }) },
          respond: { body: [listBody([pod('a', String(first))], String(first))] },
        },
        ...streams,
        {
          name: 'hold',
          expect: { path: PODS, query: watchQuery(resumeFrom(offsets.length)) },
          respond: { then: 'stall' },
        },
      ],
    },
    {
      // Every stream counts as healthy, so each normal end is resumed at once.
      stableMs: 0,
      wrap: (client) => ({
        async stream(request) {
          const response = await client.stream(request);
          const index = chunksPerStream.push(0) - 1;
          return {
            statusCode: response.statusCode,
            body: (async function* () {
              for await (const chunk of response.body) {
                chunksPerStream[index] = (chunksPerStream[index] ?? 0) + 1;
                firstChunk(index).resolve();
                yield chunk;
              }
            })(),
          };
        },
      }),
    },
  );
  const expected = [
    'initial:a',
    `synced:${first}`,
    ...offsets.flatMap((_, stream) => [
      `modified:a@${baseOf(stream) + 1}`,
      'added:b',
      'deleted:b',
      `bookmark:${baseOf(stream) + 4}`,
    ]),
  ];
  await run.until((events) => events.length >= expected.length);
  await run.requests(offsets.length + 2);
  assertPlayed(run);
  await run.stop();

  assert.deepEqual(run.types(), expected);
  for (const event of run.events) {
    if (event.type === 'modified') assert.equal(event.object.metadata?.annotations?.note, NOTE_A);
    if (event.type === 'added') assert.equal(event.object.metadata?.annotations?.note, NOTE_B);
  }
  // Every stream (not the list, not the hold) really arrived in pieces, not coalesced into one read.
  const split = chunksPerStream.slice(1, 1 + offsets.length).filter((n) => n >= 2).length;
  assert.equal(split, offsets.length, `${split} of ${offsets.length} streams arrived in two chunks or more`);
});

for (const [how, then, kind] of [
  ['a connection reset', 'reset', 'transport'],
  ['a clean end of the response', 'end', 'decode'],
] as const) {
  test(`${how} in the middle of an object is reported and the watch resumes from the last resourceVersion, without a relist`, async (t) => {
    const torn = line('MODIFIED', pod('b', '12'));
    const run = await startRun(t, {
      name: `${then} mid-object`,
      steps: [
        {
          name: 'list',
          expect: { path: PODS, query: listQuery({ limit: 500 }) },
          respond: { body: [listBody([pod('a', '10'), pod('b', '10')], '10')] },
        },
        {
          name: 'watch, torn mid-object',
          expect: { path: PODS, query: watchQuery('10') },
          respond: { body: [line('MODIFIED', pod('a', '11')), torn.slice(0, 30)], then },
        },
        {
          name: 'resume',
          expect: { path: PODS, query: watchQuery('11') },
          respond: { body: [torn], then: 'stall' },
        },
      ],
    });
    await run.until((events) => events.some((e) => e.type === 'modified' && e.object.metadata?.name === 'b'));
    assertPlayed(run);
    assert.deepEqual(run.types(), [
      'initial:a',
      'initial:b',
      'synced:10',
      'modified:a@11',
      `error:${kind}`,
      'modified:b@12',
    ]);
    if (then === 'end')
      assert.match(errors(run.events)[0]?.error.message ?? '', /stream ended in the middle of a line/);
    assert.deepEqual(requestLog(run.server), ['list', 'watch rv=10', 'watch rv=11']);
    const status = run.watcher.status();
    assert.equal(status.relists, 0);
    assert.equal(status.reconnects, 1);
    assert.equal(status.resourceVersion, '12');
  });
}

test('a half-open watch stream that stops sending bytes is declared dead by the inactivity deadline and resumed', async (t) => {
  const run = await startRun(
    t,
    {
      name: 'half-open watch',
      steps: [
        {
          name: 'list',
          expect: { path: PODS, query: listQuery({ limit: 500 }) },
          respond: { body: [listBody([pod('a', '10')], '10')] },
        },
        {
          name: 'watch, then silence',
          expect: { path: PODS, query: watchQuery('10') },
          respond: { body: [line('MODIFIED', pod('a', '11'))], then: 'stall' },
        },
        {
          name: 'resume',
          expect: { path: PODS, query: watchQuery('11') },
          respond: { body: [line('MODIFIED', pod('a', '12'))], then: 'stall' },
        },
      ],
    },
    { inactivityTimeoutMs: 300 },
  );
  await run.until((events) =>
    events.some((e) => e.type === 'modified' && e.object.metadata?.resourceVersion === '12'),
  );
  await run.stop(); // before the last stall runs into the deadline too
  assertPlayed(run);
  assert.deepEqual(run.types(), [
    'initial:a',
    'synced:10',
    'modified:a@11',
    'error:transport',
    'modified:a@12',
  ]);
  assert.match(
    errors(run.events)[0]?.error.message ?? '',
    /no data for 0\.3 s from \/api\/v1\/namespaces\/shop\/pods/,
  );
  const [, stalled, resumed] = run.server.requests;
  assert.ok(stalled && resumed);
  assert.ok(
    resumed.at - stalled.at >= 300 - 10,
    `resumed ${resumed.at - stalled.at} ms after the stall began`,
  );
  assert.equal(run.watcher.status().relists, 0);
});

test('a list whose response headers never come, whose body stalls or ends early, is retried without duplicates', async (t) => {
  const full = listBody([pod('a', '10'), pod('b', '10')], '10');
  const run = await startRun(
    t,
    {
      name: 'silent list',
      steps: [
        { name: 'no headers', expect: { path: PODS, query: listQuery({ limit: 500 }) }, respond: 'hang' },
        {
          name: 'body stalls after the first item',
          expect: { path: PODS, query: listQuery({ limit: 500 }) },
          respond: { body: [full.slice(0, full.indexOf('"b"'))], then: 'stall' },
        },
        {
          name: 'body ends in the middle of the second item',
          expect: { path: PODS, query: listQuery({ limit: 500 }) },
          respond: { body: [full.slice(0, full.indexOf('"b"') + 10)] },
        },
        {
          name: 'list',
          expect: { path: PODS, query: listQuery({ limit: 500 }) },
          respond: { body: [full] },
        },
        {
          name: 'watch',
          expect: { path: PODS, query: watchQuery('10') },
          respond: { body: [bookmarkLine('11')], then: 'stall' },
        },
      ],
    },
    { inactivityTimeoutMs: 300 },
  );
  await run.until((events) => events.some((e) => e.type === 'bookmark'));
  await run.stop();
  assertPlayed(run);
  assert.deepEqual(run.types(), [
    'error:transport',
    'initial:a',
    'error:transport',
    'error:decode',
    'initial:b',
    'synced:10',
    'bookmark:11',
  ]);
  const messages = errors(run.events).map((e) => e.error.message);
  assert.match(messages[0] ?? '', /no data for 0\.3 s/);
  assert.match(messages[1] ?? '', /no data for 0\.3 s/);
  const [hung, stalled] = run.server.requests;
  assert.ok(hung && stalled);
  assert.ok(stalled.at - hung.at >= 300 - 10, `retried ${stalled.at - hung.at} ms after the request`);
});

test('a malformed line is an error event naming the problem and the watch resumes from the last good resourceVersion', async (t) => {
  const meta = (rv: string): string =>
    `{"metadata":{"name":"a","namespace":"shop","uid":"uid-a","resourceVersion":"${rv}"}}`;
  const malformed: [string, RegExp][] = [
    ['this is not JSON\n', /malformed watch event .* at line 2 \(byte \d+\): "this is not JSON"/],
    [
      `{"type":"SURPRISE","object":${meta('90')}}\n`,
      /watch event of unknown type "SURPRISE" \(expected ADDED/,
    ],
    ['{"type":"MODIFIED","object":"a"}\n', /MODIFIED watch event whose object is not an object at line 2/],
    ['{"type":"ERROR","object":{"message":"x"}}\n', /ERROR watch event without a Status at line 2/],
    // The resourceVersion can be read before the line turns out broken: it must not become the resume point.
    [`{"type":"MODIFIED","object":${meta('99')},"oops\n`, /malformed watch event .* at line 2/],
  ];
  const good = (rv: number): string => line('MODIFIED', pod('a', String(rv)));
  const steps: ScriptStep[] = malformed.map(([bad], i) => ({
    name: `malformed line ${i + 1}`,
    expect: { path: PODS, query: watchQuery(String(10 + i)) },
    respond: { body: [good(11 + i), bad, good(12 + i)], then: 'stall' },
  }));
  const last = 11 + malformed.length;
  const run = await startRun(t, {
    name: 'malformed lines',
    steps: [
      {
        name: 'list',
        expect: { path: PODS, query: listQuery({ limit: 500 }) },
        respond: { body: [listBody([pod('a', '10')], '10')] },
      },
      ...steps,
      {
        name: 'resume',
        expect: { path: PODS, query: watchQuery(String(last - 1)) },
        respond: { body: [good(last)], then: 'stall' },
      },
    ],
  });
  const isLast = (e: WatcherEvent): boolean =>
    e.type === 'modified' && e.object.metadata?.resourceVersion === String(last);
  await run.until((events) => events.some(isLast));
  assertPlayed(run);
  assert.deepEqual(run.types(), [
    'initial:a',
    'synced:10',
    ...malformed.flatMap((_, i) => [`modified:a@${11 + i}`, 'error:decode']),
    `modified:a@${last}`,
  ]);
  const messages = errors(run.events).map((e) => e.error.message);
  malformed.forEach(([, message], i) => assert.match(messages[i] ?? '', message));
  assert.equal(run.watcher.status().relists, 0);
});

test('bookmark-only periods advance the resourceVersion, do not trip the inactivity deadline, and the resume uses the last bookmark', async (t) => {
  const bookmarks = Array.from({ length: 8 }, (_, i) => ({
    delayMs: i === 0 ? 0 : 100,
    data: bookmarkLine(String(11 + i)),
  }));
  const run = await startRun(
    t,
    {
      name: 'bookmarks only',
      steps: [
        {
          name: 'list',
          expect: { path: PODS, query: listQuery({ limit: 500 }) },
          respond: { body: [listBody([pod('a', '10')], '10')] },
        },
        {
          name: 'bookmarks for longer than the deadline',
          expect: { path: PODS, query: watchQuery('10') },
          respond: { body: bookmarks, then: 'end' },
        },
        {
          name: 'resume from the last bookmark',
          expect: { path: PODS, query: watchQuery('18') },
          respond: { body: [line('MODIFIED', pod('a', '19'))], then: 'stall' },
        },
      ],
    },
    { inactivityTimeoutMs: 300 },
  );
  await run.until((events) => events.some((e) => e.type === 'modified'));
  await run.stop();
  assertPlayed(run);
  assert.deepEqual(run.types(), [
    'initial:a',
    'synced:10',
    ...bookmarks.map((_, i) => `bookmark:${11 + i}`),
    'modified:a@19',
  ]);
  const [, watched, resumed] = run.server.requests;
  assert.ok(watched && resumed);
  assert.ok(resumed.at - watched.at >= 700 - 10, `the bookmark stream lived ${resumed.at - watched.at} ms`);
  assert.equal(run.watcher.status().relists, 0);
});
