import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  objectPeekOf,
  peekFields,
  peekObject,
  peekWatchEvent,
  type ObjectPeek,
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
    assert.deepEqual(peekWatchEvent(Buffer.from(line)), parsedPeek(line));
  });
}

test('peeking reads the outer metadata, not a nested one or a string that looks like one', () => {
  const line = tricky[1]?.[1] ?? '';
  assert.deepEqual(peekWatchEvent(Buffer.from(line)), {
    type: 'MODIFIED',
    resourceVersion: '3',
    name: 'outer',
  });
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
    assert.equal(peekWatchEvent(Buffer.from(line)), undefined);
  });
}

test('peekObject reads a bare object, such as a list item', () => {
  const pod = realisticPod('web-1', '9', 'prod');
  const meta = pod.metadata as Record<string, string>;
  assert.deepEqual(peekObject(Buffer.from(JSON.stringify(pod))), {
    name: 'web-1',
    namespace: 'prod',
    uid: meta.uid,
    resourceVersion: '9',
  });
});

test('peeking reads only as far as it needs, leaving damage after the wanted fields to the parse', () => {
  const line = '{"type":"ADDED","object":{"metadata":{"name":"a"},"spec":{"x":';
  assert.deepEqual(peekWatchEvent(Buffer.from(line)), { type: 'ADDED', name: 'a' });
  assert.throws(() => JSON.parse(line), SyntaxError);
});

test('a peek told which fields to read reads only those, and stops as soon as it has them', () => {
  const filler = 'x'.repeat(4096);
  // Cluster-scoped: no namespace. Read whole, the peek must reach the metadata's end to know.
  const node = `{"kind":"Node","metadata":{"name":"a","uid":"u","resourceVersion":"7","labels":{"l":"${filler}"}}}`;
  const uidAndVersion = peekFields(['uid', 'resourceVersion']);
  assert.deepEqual(peekObject(Buffer.from(node)), { name: 'a', uid: 'u', resourceVersion: '7' });
  assert.deepEqual(peekObject(Buffer.from(node), uidAndVersion), { uid: 'u', resourceVersion: '7' });
  // Cut inside the labels: every field is not settled (the namespace might follow), the two are.
  const cut = Buffer.from(node).subarray(0, 200);
  assert.equal(peekObject(cut), undefined);
  assert.deepEqual(peekObject(cut, uidAndVersion), { uid: 'u', resourceVersion: '7' });
  const event = Buffer.from(`{"type":"MODIFIED","object":${node}}`).subarray(0, 220);
  assert.deepEqual(peekWatchEvent(event, uidAndVersion), {
    type: 'MODIFIED',
    uid: 'u',
    resourceVersion: '7',
  });
  assert.equal(peekWatchEvent(event), undefined);
  // A field written after the long member is still found, as whatever it is written as.
  for (const key of ['namespace', 'n\\u0061mespace']) {
    const late = `{"metadata":{"name":"a","labels":{"l":"${filler}"},"${key}":"late"}}`;
    assert.deepEqual(peekObject(Buffer.from(late), peekFields(['namespace'])), { namespace: 'late' });
  }
  // "namespace" as a key of another object, or as a string value, is not the metadata's.
  const other = `{"kind":"ClusterRoleBinding","metadata":{"name":"b","uid":"u"},"subjects":[{"namespace":"s","path":"namespace"}]}`;
  assert.deepEqual(peekObject(Buffer.from(other)), { name: 'b', uid: 'u' });
});

test('a metadata key written with escapes is read as what it decodes to, whatever its written length', () => {
  // "\u006eame" is 9 characters long, as "namespace" is, and reads "name".
  for (const line of [
    '{"type":"ADDED","object":{"metadata":{"\\u006eame":"a","namespace":"n","uid":"u","resourceVersion":"1"}}}',
    '{"type":"ADDED","object":{"metadata":{"n\\u0061mespace":"n","\\u0075id":"u","name":"a","resourceVersion":"1"}}}',
    '{"\\u0074ype":"ADDED","\\u006fbject":{"\\u006detadata":{"name":"a","namespace":"n","uid":"u","resourceVersion":"1"}}}',
  ]) {
    const parsed = JSON.parse(line) as { type: string; object: { metadata: Record<string, string> } };
    assert.deepEqual(peekWatchEvent(Buffer.from(line)), { type: parsed.type, ...parsed.object.metadata });
  }
});

test('a peek of any prefix of an object or event, of every field or a few, is unsure or what the whole parses to', () => {
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
  const fieldSets: (keyof ObjectPeek)[][] = [
    ['resourceVersion', 'name', 'namespace', 'uid'],
    ['uid', 'resourceVersion'],
    ['namespace', 'resourceVersion'],
  ];
  const settled = new Map<string, number>();
  for (const text of objects) {
    const bytes = Buffer.from(text);
    const parsed = objectPeekOf(JSON.parse(text));
    const eventBytes = Buffer.from(`{"type":"MODIFIED","object":${text}}`);
    for (const fields of fieldSets) {
      const expected: ObjectPeek = {};
      for (const field of fields) if (parsed[field] !== undefined) expected[field] = parsed[field];
      const bits = peekFields(fields);
      // Every cut, by bytes: a prefix may end in the middle of a multi-byte character.
      for (let cut = 0; cut <= bytes.length; cut++) {
        const peek = peekObject(bytes.subarray(0, cut), bits);
        if (peek !== undefined) {
          settled.set(fields.join(), (settled.get(fields.join()) ?? 0) + 1);
          assert.deepEqual(peek, expected, `object cut at byte ${cut}, reading ${fields.join()}`);
        }
        const eventPeek = peekWatchEvent(eventBytes.subarray(0, cut + 28), bits);
        if (eventPeek !== undefined)
          assert.deepEqual(eventPeek, { type: 'MODIFIED', ...expected }, `event cut at ${cut + 28}`);
      }
      assert.deepEqual(peekObject(bytes, bits), expected, 'the whole object settles it');
    }
  }
  assert.equal(settled.size, fieldSets.length, 'some prefixes settle, for every set of fields');
});
