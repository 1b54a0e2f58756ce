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
  // Cluster-scoped: no namespace, so the scan of the prefix runs off its end inside the metadata.
  // No `"namespace"` key and no \u escape anywhere in the bytes: the prefix settles it.
  const clusterScoped = `{"kind":"Node","metadata":{"name":"a","uid":"u","resourceVersion":"7","labels":{"l":"${filler}"}}}`;
  assert.deepEqual(peekBytes(Buffer.from(clusterScoped), peekObject, whole(clusterScoped)), {
    name: 'a',
    uid: 'u',
    resourceVersion: '7',
  });
  assert.equal(wholeReads, 0, 'a missing namespace was settled from the bytes');
  // The key further on, or an escape that could spell it: only the whole text can say.
  for (const [later, namespace] of [
    [
      `{"kind":"Node","metadata":{"name":"a","uid":"u","resourceVersion":"7","labels":{"l":"${filler}"},"namespace":"late"}}`,
      'late',
    ],
    [
      `{"kind":"Node","metadata":{"name":"a","uid":"u","resourceVersion":"7","labels":{"l":"${filler}"},"n\\u0061mespace":"late"}}`,
      'late',
    ],
    [
      `{"kind":"Node","metadata":{"name":"a","uid":"u","resourceVersion":"7","labels":{"l":"${filler}"},"namespace"\t :"late"}}`,
      'late',
    ],
    [
      `{"kind":"ClusterRoleBinding","metadata":{"name":"a","uid":"u","resourceVersion":"7","labels":{"l":"${filler}"}},"subjects":[{"namespace":"s"}]}`,
      undefined,
    ],
  ] as const) {
    const reads: number = wholeReads;
    assert.equal(peekBytes(Buffer.from(later), peekObject, whole(later))?.namespace, namespace);
    assert.equal(wholeReads, reads + 1);
  }
  // "namespace" written only as a string value (a pod template's downward API path): still absent.
  const valueOnly = `{"kind":"Node","metadata":{"name":"a","uid":"u","resourceVersion":"7","labels":{"l":"${filler}"}},"spec":{"items":[{"path":"namespace"}]}}`;
  const reads: number = wholeReads;
  assert.equal(peekBytes(Buffer.from(valueOnly), peekObject, whole(valueOnly))?.name, 'a');
  assert.equal(wholeReads, reads, 'a string value is not a key');
  // A name longer than the first prefix: the second settles it.
  const longish = 'n'.repeat(first);
  const second = `{"kind":"Pod","metadata":{"name":"${longish}","namespace":"n","uid":"u","resourceVersion":"7","labels":{"l":"${filler}"}}}`;
  assert.equal(peekBytes(Buffer.from(second), peekObject, whole(second))?.name, longish);
  assert.equal(wholeReads, 4, 'the second prefix settled it');
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
  assert.equal(wholeReads, 5);
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

test('a peek of any prefix of an object or event is either unsure or what the whole text parses to', () => {
  const filler = 'é'.repeat(40);
  const pod = realisticPod('web-0', '77', 'prod');
  const node: Record<string, unknown> = { ...realisticPod('node-1', '78'), kind: 'Node' };
  delete (node.metadata as Record<string, unknown>).namespace;
  const binding = {
    kind: 'ClusterRoleBinding',
    metadata: { name: 'b', uid: 'u-1', resourceVersion: '79', labels: { l: filler } },
    subjects: [{ kind: 'ServiceAccount', name: 'sa', namespace: 'kube-system' }],
  };
  const escaped = {
    kind: 'Node',
    metadata: { name: 'n', uid: 'u', labels: { l: '<&>' }, resourceVersion: '80' },
  };
  const late = {
    kind: 'Thing',
    metadata: { name: 'l', uid: 'u', resourceVersion: '81', labels: { l: filler }, namespace: 'late' },
  };
  const objects = [pod, node, binding, escaped, late].map((object) =>
    JSON.stringify(object).replaceAll('<&>', '\\u003c&>'),
  );
  let settled = 0;
  for (const text of objects) {
    const bytes = Buffer.from(text);
    const expected = objectPeekOf(JSON.parse(text));
    const event = `{"type":"MODIFIED","object":${text}}`;
    const eventBytes = Buffer.from(event);
    const expectedEvent = { type: 'MODIFIED', ...expected };
    // Every cut, by bytes (the decoded prefix may end in a broken character) as peekBytes makes them.
    for (let cut = 0; cut < bytes.length; cut++) {
      const peek = peekObject(bytes.toString('utf8', 0, cut), bytes);
      if (peek !== undefined) {
        settled++;
        assert.deepEqual(peek, expected, `object cut at byte ${cut}`);
      }
      const eventPeek = peekWatchEvent(eventBytes.toString('utf8', 0, cut), eventBytes);
      if (eventPeek !== undefined) assert.deepEqual(eventPeek, expectedEvent, `event cut at byte ${cut}`);
    }
  }
  assert.ok(settled > 0, 'some prefixes settle');
});
