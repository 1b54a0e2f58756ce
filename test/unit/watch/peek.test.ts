import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  objectPeekOf,
  peekBytes,
  peekObject,
  peekWatchEvent,
  PEEK_PREFIX_BYTES,
} from '../../../src/watch/decode/peek.js';
import { realisticPod } from './fixtures.js';

/** What a full parse says the peek should be. */
function parsedPeek(line: string): unknown {
  const event = JSON.parse(line) as { type: string; object: unknown };
  return { type: event.type, ...objectPeekOf(event.object) };
}

const tricky: [string, string][] = [
  ['a realistic pod', JSON.stringify({ type: 'ADDED', object: realisticPod('web-0', '77') })],
  [
    'resourceVersion inside an annotation value and a nested object before metadata',
    '{"type":"MODIFIED","object":{"spec":{"metadata":{"resourceVersion":"1","name":"inner"}},' +
      '"metadata":{"annotations":{"x":"\\"resourceVersion\\":\\"2\\""},"resourceVersion":"3","name":"outer"}}}',
  ],
  [
    'escaped quotes and backslashes in the name',
    '{"type":"ADDED","object":{"metadata":{"name":"a\\"b\\\\","namespace":"n\\\\","uid":"u"}}}',
  ],
  [
    'unicode escapes in keys and values',
    '{"type":"DELETED","object":{"metadata":{"n\\u0061me":"\\u65e5\\u672c","resourceVersion":"\\u0039"}}}',
  ],
  ['type after object', '{"object":{"metadata":{"name":"late"}},"type":"ADDED"}'],
  [
    'whitespace everywhere',
    ' { "type" : "ADDED" ,\t"object" : { "metadata" : { "name" : "a" , "uid" : "b" } } } ',
  ],
  [
    'non-string metadata fields',
    '{"type":"ADDED","object":{"metadata":{"name":null,"resourceVersion":7,"uid":{"a":1}}}}',
  ],
  ['metadata that is not an object', '{"type":"ADDED","object":{"metadata":"weird"}}'],
  ['no metadata at all', '{"type":"BOOKMARK","object":{"kind":"Pod"}}'],
  [
    'a surrogate pair emoji',
    '{"type":"ADDED","object":{"metadata":{"name":"😀","namespace":"\\ud83d\\ude00"}}}',
  ],
];

for (const [what, line] of tricky) {
  test(`peeking a watch event with ${what} agrees with a full parse`, () => {
    assert.deepEqual(peekWatchEvent(line), parsedPeek(line));
  });
}

test('peeking reads the outer metadata, not a nested one or a string that looks like one', () => {
  const line = tricky[1]?.[1] ?? '';
  assert.deepEqual(peekWatchEvent(line), { type: 'MODIFIED', resourceVersion: '3', name: 'outer' });
});

const unsure: [string, string][] = [
  ['a missing comma between members', '{"type":"ADDED" "object":{"metadata":{"name":"a"}}}'],
  ['a missing colon in metadata', '{"type":"ADDED","object":{"metadata":{"name" "a"}}}'],
  ['an unterminated string', '{"type":"ADDED","object":{"metadata":{"name":"a}}}'],
  ['a missing object', '{"type":"ADDED"}'],
  ['an object that is not an object', '{"type":"ADDED","object":"x"}'],
  ['a non-string type', '{"type":1,"object":{}}'],
  ['a bad escape in a wanted value', '{"type":"ADDED","object":{"metadata":{"name":"\\x"}}}'],
  [
    'mismatched brackets inside a skipped value',
    '{"type":"ADDED","object":{"spec":{"a":[1}],"metadata":{}}}',
  ],
  ['not an object', '[{"type":"ADDED"}]'],
  ['an empty line', ''],
];

for (const [what, line] of unsure) {
  test(`peeking a line with ${what} answers undefined rather than guessing`, () => {
    assert.equal(peekWatchEvent(line), undefined);
  });
}

test('peekObject reads a bare object, such as a list item', () => {
  const pod = realisticPod('web-1', '9', 'prod');
  const meta = pod.metadata as Record<string, string>;
  assert.deepEqual(peekObject(JSON.stringify(pod)), {
    name: 'web-1',
    namespace: 'prod',
    uid: meta.uid,
    resourceVersion: '9',
  });
});

test('peeking reads only as far as it needs, leaving damage after the wanted fields to the parse', () => {
  const line = '{"type":"ADDED","object":{"metadata":{"name":"a"},"spec":{"x":';
  assert.deepEqual(peekWatchEvent(line), { type: 'ADDED', name: 'a' });
  assert.throws(() => JSON.parse(line), SyntaxError);
});

test('a peek of raw bytes reads a decoded prefix when that settles it, and the whole text when it does not', () => {
  const [first, longest] = PEEK_PREFIX_BYTES;
  const filler = 'x'.repeat(longest * 2);
  const namespaced = `{"kind":"Pod","metadata":{"name":"a","namespace":"n","uid":"u","resourceVersion":"7","labels":{"l":"${filler}"}}}`;
  let wholeReads = 0;
  const whole = (text: string) => (): string => {
    wholeReads++;
    return text;
  };
  assert.deepEqual(peekBytes(Buffer.from(namespaced), peekObject, whole(namespaced)), {
    name: 'a',
    namespace: 'n',
    uid: 'u',
    resourceVersion: '7',
  });
  assert.equal(wholeReads, 0, 'the prefix settled it');
  // Cluster-scoped: no namespace, so the scanner reads on past the prefix and must see the whole text.
  const clusterScoped = `{"kind":"Node","metadata":{"name":"a","uid":"u","resourceVersion":"7","labels":{"l":"${filler}"}}}`;
  assert.deepEqual(peekBytes(Buffer.from(clusterScoped), peekObject, whole(clusterScoped)), {
    name: 'a',
    uid: 'u',
    resourceVersion: '7',
  });
  assert.equal(wholeReads, 1);
  // A name longer than the first prefix: the second settles it.
  const longish = 'n'.repeat(first);
  const second = `{"kind":"Pod","metadata":{"name":"${longish}","namespace":"n","uid":"u","resourceVersion":"7","labels":{"l":"${filler}"}}}`;
  assert.equal(peekBytes(Buffer.from(second), peekObject, whole(second))?.name, longish);
  assert.equal(wholeReads, 1, 'the second prefix settled it');
  // A name cut by both prefixes, in the middle of a multi-byte character.
  const longName = 'é'.repeat(longest);
  const cut = `{"type":"ADDED","object":{"metadata":{"name":"${longName}","namespace":"n","uid":"u","resourceVersion":"7"}}}`;
  assert.deepEqual(peekBytes(Buffer.from(cut), peekWatchEvent, whole(cut)), {
    type: 'ADDED',
    name: longName,
    namespace: 'n',
    uid: 'u',
    resourceVersion: '7',
  });
  assert.equal(wholeReads, 2);
});

test('a metadata key written with escapes is read as what it decodes to, whatever its written length', () => {
  // "\u006eame" is 9 characters long, as "namespace" is, and reads "name".
  for (const line of [
    '{"type":"ADDED","object":{"metadata":{"\\u006eame":"a","namespace":"n","uid":"u","resourceVersion":"1"}}}',
    '{"type":"ADDED","object":{"metadata":{"n\\u0061mespace":"n","\\u0075id":"u","name":"a","resourceVersion":"1"}}}',
    '{"\\u0074ype":"ADDED","\\u006fbject":{"\\u006detadata":{"name":"a","namespace":"n","uid":"u","resourceVersion":"1"}}}',
  ]) {
    const parsed = JSON.parse(line) as { type: string; object: { metadata: Record<string, string> } };
    assert.deepEqual(peekWatchEvent(line), { type: parsed.type, ...parsed.object.metadata });
  }
});
