import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeWatchEvents, type DecodeWatchOptions } from '../../../src/watch/decode/decode-watch-events.js';
import { StreamDecodeError } from '../../../src/watch/decode/stream-decode-error.js';
import type { WatchEvent } from '../../../src/watch/decode/watch-event.js';
import { ApiError } from '../../../src/errors/api-error.js';
import { DecodeError } from '../../../src/errors/raven-error.js';
import { isExpired, isStreamBroken } from '../../../src/errors/classify.js';
import {
  body,
  chunksOf,
  collect,
  encode,
  failureOf,
  ndjson,
  realisticPod,
  sampleWatchEvents,
} from './fixtures.js';

function decode(chunks: Uint8Array[], options?: DecodeWatchOptions): Promise<WatchEvent[]> {
  return collect(decodeWatchEvents(body(chunks), options));
}

/** Events as plain data, comparable with deepEqual (the ApiError is compared by its fields). */
function plain(events: WatchEvent[]): unknown[] {
  return events.map((event) =>
    event.type === 'ERROR' ? { ...event, error: [event.error.statusCode, event.error.message] } : event,
  );
}

const sample = encode(ndjson(sampleWatchEvents()));

test('the sample stream decodes to its events, with the in-stream 410 as an ApiError value', async () => {
  const events = await decode([sample]);
  assert.deepEqual(
    events.map((e) => e.type),
    ['ADDED', 'MODIFIED', 'BOOKMARK', 'DELETED', 'ERROR'],
  );
  assert.deepEqual(events.slice(0, 4), sampleWatchEvents().slice(0, 4));
  const last = events[4];
  assert.ok(last?.type === 'ERROR');
  assert.ok(last.error instanceof ApiError);
  assert.equal(last.error.statusCode, 410);
  assert.equal(isExpired(last.error), true);
  assert.equal(last.object.reason, 'Expired');
});

test('splitting the sample stream into two chunks at every byte offset yields the same events', async () => {
  const expected = plain(await decode([sample]));
  for (let cut = 0; cut <= sample.length; cut++) {
    const events = await decode([sample.subarray(0, cut), sample.subarray(cut)]);
    assert.deepEqual(plain(events), expected, `split at byte ${cut}`);
  }
});

test('one-byte chunks yield the same events, also with managedFields dropping and a filter', async () => {
  const options: DecodeWatchOptions = { dropManagedFields: true, filter: () => true };
  const expected = plain(await decode([sample], options));
  assert.deepEqual(plain(await decode(chunksOf(sample, 1), options)), expected);
  assert.deepEqual(plain(await decode(chunksOf(sample, 1))), plain(await decode([sample])));
});

test('an object of several megabytes spread over many small chunks decodes intact', async () => {
  const big = realisticPod('big', '5');
  big.data = { blob: 'x€'.repeat(2_000_000) };
  const bytes = encode(
    ndjson([
      { type: 'ADDED', object: big },
      { type: 'DELETED', object: big },
    ]),
  );
  assert.ok(bytes.length > 8_000_000);
  const events = await decode(chunksOf(bytes, 16 * 1024));
  assert.equal(events.length, 2);
  assert.deepEqual(events[1], { type: 'DELETED', object: big });
});

test('thousands of events in one chunk all come out in order', async () => {
  const input = Array.from({ length: 5000 }, (_, i) => ({
    type: 'MODIFIED',
    object: { kind: 'ConfigMap', metadata: { name: `cm-${i}`, resourceVersion: String(i) } },
  }));
  const events = await decode([encode(ndjson(input))]);
  assert.equal(events.length, 5000);
  assert.deepEqual(events, input);
});

test('blank lines are ignored and an empty trailing remainder is fine', async () => {
  const text = `\n${ndjson(sampleWatchEvents().slice(0, 2))}\n  \r\n\n`;
  const events = await decode([encode(text)]);
  assert.equal(events.length, 2);
});

test('a malformed line fails the stream with a DecodeError giving its line, byte offset and an excerpt', async () => {
  const good = ndjson(sampleWatchEvents().slice(0, 1));
  const text = `${good}{"type":"ADDED","object":{"metadata":}\n${good}`;
  const err = await failureOf(decodeWatchEvents(body([encode(text)])));
  assert.ok(err instanceof StreamDecodeError);
  assert.ok(err instanceof DecodeError);
  assert.equal(isStreamBroken(err), true);
  assert.equal(err.line, 2);
  assert.equal(err.byteOffset, encode(good).length);
  assert.match(
    err.message,
    /^malformed watch event \(.*\) at line 2 \(byte \d+\): "\{\\"type\\":\\"ADDED\\"/,
  );
});

test('events before a malformed line are delivered before the error', async () => {
  const text = `${ndjson(sampleWatchEvents().slice(0, 2))}not json\n`;
  const seen: string[] = [];
  const err = await failureOf(
    (async function* () {
      for await (const event of decodeWatchEvents(body([encode(text)]))) {
        seen.push(event.type);
        yield event;
      }
    })(),
  );
  assert.deepEqual(seen, ['ADDED', 'MODIFIED']);
  assert.ok(err instanceof StreamDecodeError);
});

const badLines: [string, string, RegExp][] = [
  ['missing type', '{"object":{}}', /^watch event without a type at line 1/],
  [
    'unknown type',
    '{"type":"CHANGED","object":{}}',
    /unknown type "CHANGED" \(expected ADDED, MODIFIED, DELETED, BOOKMARK or ERROR\)/,
  ],
  [
    'object not an object',
    '{"type":"ADDED","object":[1]}',
    /ADDED watch event whose object is not an object/,
  ],
  ['object missing', '{"type":"DELETED"}', /DELETED watch event whose object is not an object/],
  ['not an object', '[1,2]', /watch event is not a JSON object/],
  [
    'ERROR without a Status',
    '{"type":"ERROR","object":{"kind":"Pod"}}',
    /ERROR watch event without a Status/,
  ],
];

for (const [what, line, message] of badLines) {
  test(`a line with ${what} is a DecodeError`, async () => {
    for (const options of [{}, { filter: () => true, dropManagedFields: true }]) {
      const err = await failureOf(decodeWatchEvents(body([encode(`${line}\n`)]), options));
      assert.ok(err instanceof StreamDecodeError);
      assert.match(err.message, message);
    }
  });
}

test('an ERROR with a non-410 Status is an ApiError the watcher can tell from an expiry', async () => {
  const status = {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    reason: 'InternalError',
    code: 500,
    message: 'boom',
  };
  const [event] = await decode([encode(ndjson([{ type: 'ERROR', object: status }]))]);
  assert.ok(event?.type === 'ERROR');
  assert.equal(event.error.statusCode, 500);
  assert.equal(isExpired(event.error), false);
});

test('a truncated last line is a DecodeError', async () => {
  const text = `${ndjson(sampleWatchEvents().slice(0, 1))}{"type":"ADDED","obj`;
  const err = await failureOf(decodeWatchEvents(body(chunksOf(encode(text), 7))));
  assert.ok(err instanceof StreamDecodeError);
  assert.match(err.message, /^stream ended in the middle of a line at line 2/);
});

test('a line longer than maxLineBytes fails before its newline arrives', async () => {
  let pulled = 0;
  async function* endless(): AsyncGenerator<Uint8Array> {
    for (;;) {
      pulled++;
      await Promise.resolve();
      yield encode('{"type":"ADDED","object":{"pad":"' + 'x'.repeat(100));
    }
  }
  const err = await failureOf(decodeWatchEvents(endless(), { maxLineBytes: 1000 }));
  assert.ok(err instanceof StreamDecodeError);
  assert.match(err.message, /line longer than the maximum of 1000 bytes at line 1 \(byte 0\)/);
  assert.ok(pulled < 20);
});

test('a filter drops events before parsing, seeing the type and identifying metadata', async () => {
  const seen: unknown[] = [];
  const events = await decode([sample], {
    filter: (peek) => {
      seen.push(peek);
      return peek.name !== 'web-é';
    },
  });
  assert.deepEqual(
    events.map((e) => e.type),
    ['ADDED', 'BOOKMARK', 'DELETED', 'ERROR'],
  );
  assert.deepEqual(seen[1], {
    type: 'MODIFIED',
    name: 'web-é',
    namespace: 'team-a',
    uid: '0b6f2c9e-web-é-4c1d-9a8e-1f2e3d4c5b6a',
    resourceVersion: '102',
  });
  assert.deepEqual(seen[2], { type: 'BOOKMARK', resourceVersion: '103' });
  assert.equal(seen.length, 4, 'the ERROR event is never offered to the filter');
});

test('dropManagedFields removes managedFields from every event object and nothing else', async () => {
  const events = await decode(chunksOf(sample, 333), { dropManagedFields: true });
  const expected = sampleWatchEvents() as unknown as WatchEvent[];
  for (const [i, event] of events.entries()) {
    if (event.type === 'ERROR') continue;
    const want = structuredClone(expected[i]) as { object: { metadata?: { managedFields?: unknown } } };
    delete want.object.metadata?.managedFields;
    assert.deepEqual(event, want);
  }
});

/** Decode `lines` with objectJson, returning the events and what objectJson was given. */
async function decodeWithJson(
  lines: string[],
  options: DecodeWatchOptions = {},
): Promise<{ events: WatchEvent[]; given: { object: unknown; json: Buffer }[] }> {
  const given: { object: unknown; json: Buffer }[] = [];
  const stream = encode(`${lines.join('\n')}\n`);
  const events = await decode([stream], {
    ...options,
    objectJson: (object, json) => given.push({ object, json }),
  });
  for (const { json } of given) assert.notEqual(json.buffer, stream.buffer, 'copied out of the stream');
  return { events, given };
}

test('objectJson is given each object with the bytes it was parsed from, managedFields cut when dropped', async () => {
  // As the apiserver writes it: `<`, `>` and `&` escaped, and an integer JSON.parse cannot hold.
  const serverObject = JSON.stringify(realisticPod('web-3', '7')).replace(
    '"spec":{',
    '"spec":{"note":"a \\u003cb\\u003e \\u0026 c","big":12345678901234567890,',
  );
  const line = (type: string): string => `{"type":"${type}","object":${serverObject}}`;
  for (const drop of [false, true]) {
    const { events, given } = await decodeWithJson(
      [
        line('ADDED'),
        line('MODIFIED'),
        '{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}',
        line('DELETED'),
      ],
      { dropManagedFields: drop },
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'MODIFIED', 'BOOKMARK', 'DELETED'],
    );
    assert.equal(given.length, 3, `drop ${drop}: each change's object, not the bookmark's`);
    for (const [i, { object, json }] of given.entries()) {
      const event = events[i === 2 ? 3 : i];
      assert.equal(object, event?.object, 'the very object the event carries');
      const text = json.toString('utf8');
      assert.deepEqual(JSON.parse(text), object, 'the same JSON value as the object');
      assert.match(text, /a \\u003cb\\u003e \\u0026 c/, "the server's bytes, escapes as they came");
      assert.match(text, /"big":12345678901234567890,/);
      assert.equal(text.includes('"managedFields":'), !drop);
    }
  }
});

test('objectJson is not given bytes it cannot vouch for, and the decoded events do not change', async () => {
  const pod = JSON.stringify(realisticPod('web-4', '8'));
  const dupManaged = JSON.stringify(realisticPod('web-5', '9')).replace(
    '"metadata":{',
    '"metadata":{"managedFields":[{"manager":"a"}],"managedFields":[{"manager":"b"}],',
  );
  const lines = [
    `{"object":${pod},"type":"ADDED"}`, // the object first
    `{"type":"ADDED", "object":${pod}}`, // whitespace
    `{"type":"MODIFIED","object":${pod},"extra":{}}`, // a member after the object
    `{"type":"MODIFIED","object":${dupManaged}}`, // a managedFields key left after the cut
    `{"type":"MODIFIED","object":{"metadata":{"name":"x"}}, "object" :${pod}}`, // the key repeated
  ];
  const plainDecode = await decode([encode(`${lines.join('\n')}\n`)], { dropManagedFields: true });
  const { events, given } = await decodeWithJson(lines, { dropManagedFields: true });
  assert.deepEqual(events, plainDecode);
  assert.equal(events.length, 5);
  assert.ok(events.every((e) => e.type !== 'ERROR' && e.object.metadata?.managedFields === undefined));
  assert.deepEqual(given, []);
  // A filter that drops an event drops it before anything is copied.
  const filtered = await decodeWithJson([`{"type":"ADDED","object":${pod}}`], { filter: () => false });
  assert.deepEqual(filtered, { events: [], given: [] });
});
