import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeList,
  type DecodeListOptions,
  type ListResult,
} from '../../../src/watch/decode/decode-list.js';
import { StreamDecodeError } from '../../../src/watch/decode/stream-decode-error.js';
import { body, chunksOf, collect, encode, failureOf, realisticPod } from './fixtures.js';

async function decode(
  chunks: Uint8Array[],
  options?: DecodeListOptions,
): Promise<{ items: unknown[]; result: ListResult }> {
  const list = decodeList(body(chunks), options);
  const items = await collect(list);
  return { items, result: list.result() };
}

const pods = [realisticPod('web-0', '10'), realisticPod('web-é', '11', 'ns-日本'), realisticPod('😀', '12')];
const listMeta = { resourceVersion: '12', continue: 'eyJ2IjoibWV0YS5rOHMuaW8vdjEi}', remainingItemCount: 40 };

const metadataFirst = JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: listMeta, items: pods });
const metadataLast = `{ "items" : [ ${pods.map((p) => JSON.stringify(p, null, 1)).join(' ,\n')} ] ,
  "apiVersion":"v1", "metadata" : ${JSON.stringify(listMeta)}, "kind": "PodList" }\n`;

for (const [order, text] of [
  ['before', metadataFirst],
  ['after', metadataLast],
] as const) {
  test(`a list with metadata ${order} items yields each item and then the list metadata`, async () => {
    const { items, result } = await decode([encode(text)]);
    assert.deepEqual(items, pods);
    assert.deepEqual(result, { kind: 'PodList', apiVersion: 'v1', metadata: listMeta, itemCount: 3 });
  });

  test(`a list with metadata ${order} items decodes the same when split at every byte offset`, async () => {
    const bytes = encode(text);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const { items, result } = await decode([bytes.subarray(0, cut), bytes.subarray(cut)]);
      assert.deepEqual(items, pods, `split at byte ${cut}`);
      assert.deepEqual(result.metadata, listMeta, `split at byte ${cut}`);
    }
  });
}

test('strings with escapes, brackets and braces inside items decode the same at every split', async () => {
  const tricky = [
    { metadata: { name: 'a', annotations: { q: 'say "}" and \\', r: '\\"]', s: '{[', t: '\\\\' } } },
    { metadata: { name: 'b\\' }, data: { x: '\\\\\\"}]{[', y: ['"', '\\', ']'], z: 'é😀\u0000' } },
    { metadata: { name: 'c' }, spec: { n: -1.5e3, t: true, f: null, e: {}, l: [[], [{}]] } },
  ];
  const text = JSON.stringify({ kind: 'ConfigMapList', metadata: { resourceVersion: '3' }, items: tricky });
  const bytes = encode(text);
  // The list says its kind but no apiVersion: each item is given the kind alone.
  const typed = tricky.map((item) => ({ kind: 'ConfigMap', ...item }));
  for (let cut = 0; cut <= bytes.length; cut++) {
    const { items } = await decode([bytes.subarray(0, cut), bytes.subarray(cut)]);
    assert.deepEqual(items, typed, `split at byte ${cut}`);
  }
  assert.deepEqual((await decode(chunksOf(bytes, 1))).items, typed);
});

test('one-byte chunks with managedFields dropping give the pods without managedFields', async () => {
  const { items } = await decode(chunksOf(encode(metadataLast), 1), { dropManagedFields: true });
  const expected = pods.map((pod) => {
    const copy = structuredClone(pod) as { metadata: { managedFields?: unknown } };
    delete copy.metadata.managedFields;
    return copy;
  });
  assert.deepEqual(items, expected);
});

test('an items array of ten thousand small objects streams every one in order', async () => {
  const small = Array.from({ length: 10_000 }, (_, i) => ({
    metadata: { name: `cm-${i}`, resourceVersion: `${i}` },
  }));
  const text = JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMapList',
    metadata: { resourceVersion: '9999' },
    items: small,
  });
  for (const chunks of [[encode(text)], chunksOf(encode(text), 4096)]) {
    const { items, result } = await decode(chunks);
    assert.equal(items.length, 10_000);
    assert.deepEqual(
      items,
      small.map((item) => ({ kind: 'ConfigMap', apiVersion: 'v1', ...item })),
    );
    assert.equal(result.itemCount, 10_000);
  }
});

test('items are yielded before the body ends, one at a time', async () => {
  const bytes = encode(metadataLast);
  const firstEnd = bytes.indexOf(encode(',')[0] ?? 0, encode(JSON.stringify(pods[0], null, 1)).length);
  let delivered = 0;
  async function* slow(): AsyncGenerator<Uint8Array> {
    yield bytes.subarray(0, firstEnd + 1);
    delivered = 1;
    await Promise.resolve();
    yield bytes.subarray(firstEnd + 1);
    delivered = 2;
  }
  const list = decodeList(slow());
  const iterator = list[Symbol.asyncIterator]();
  const first = await iterator.next();
  assert.deepEqual(first.value, pods[0]);
  assert.equal(delivered, 0);
  assert.throws(() => list.result(), /only known after its items have been read/);
});

test("items without a type of their own are given the list's, first, as a watch event's object has it", async () => {
  const bare = { metadata: { name: 'a', resourceVersion: '1' }, data: { k: 'v' } };
  const custom = { apiVersion: 'example.com/v2', kind: 'Widget', metadata: { name: 'w' } };
  const halfTyped = { metadata: { name: 'b' }, apiVersion: 'v1' };
  const text = JSON.stringify({
    kind: 'ConfigMapList',
    apiVersion: 'v1',
    metadata: { resourceVersion: '7' },
    items: [bare, custom, halfTyped],
  });
  for (const options of [{}, { dropManagedFields: true }, { filter: () => true }]) {
    const { items } = await decode([encode(text)], options);
    assert.deepEqual(items, [
      { kind: 'ConfigMap', apiVersion: 'v1', ...bare },
      custom,
      { kind: 'ConfigMap', ...halfTyped },
    ]);
    // Written as the apiserver writes a watch event's object: kind, apiVersion, then the rest.
    assert.deepEqual(Object.keys(items[0] as object), ['kind', 'apiVersion', 'metadata', 'data']);
  }
  // A list whose kind comes only after its items cannot say their type while they are read.
  const late = `{"metadata":{"resourceVersion":"7"},"items":[${JSON.stringify(bare)}],"kind":"ConfigMapList"}`;
  assert.deepEqual((await decode([encode(late)])).items, [bare]);
});

test('an empty list and a list whose items are null both decode', async () => {
  for (const text of [
    '{"kind":"PodList","items":[],"metadata":{"resourceVersion":"5"}}',
    '{"kind":"PodList","items":null}',
  ]) {
    const { items, result } = await decode([encode(text)]);
    assert.deepEqual(items, []);
    assert.equal(result.itemCount, 0);
  }
});

test('a filter drops items by their peeked metadata', async () => {
  const { items, result } = await decode([encode(metadataFirst)], {
    filter: (peek) => peek.namespace === 'team-a',
  });
  assert.deepEqual(items, [pods[0], pods[2]]);
  assert.equal(result.itemCount, 3);
});

const broken: [string, string, RegExp][] = [
  [
    'a Status instead of a list',
    '{"kind":"Status","code":500,"status":"Failure"}',
    /not a list: its kind does not end in "List"/,
  ],
  ['a single object', JSON.stringify(realisticPod('a', '1')), /not a list: its kind does not end in "List"/],
  ['a list without items', '{"kind":"PodList","metadata":{}}', /not a list: the PodList body has no items/],
  ['a list without kind', '{"items":[]}', /not a list: the body has no kind/],
  ['an array body', '[{"kind":"PodList"}]', /malformed list: expected a JSON object at byte 0/],
  ['a truncated body', metadataFirst.slice(0, 500), /list body ended before its closing brace/],
  ['an empty body', '', /empty list body/],
  [
    'a malformed item',
    '{"kind":"PodList","items":[{"a":1},{"a":}]}',
    /malformed list item 1 \(.*\) at byte 35/,
  ],
  ['an item that is not an object', '{"kind":"PodList","items":[1]}', /list item 0 is not an object/],
  [
    'a trailing comma in items',
    '{"kind":"PodList","items":[{},]}',
    /malformed list: expected a value at byte 30/,
  ],
  ['a missing colon', '{"kind" "PodList"}', /malformed list: expected ':' after a key at byte 8/],
  ['data after the list', '{"kind":"PodList","items":[]} {}', /unexpected data after the end of the list/],
  ['items that is a string', '{"kind":"PodList","items":"x"}', /list items is neither an array nor null/],
  ['malformed metadata', '{"kind":"PodList","items":[],"metadata":{"a":tru}}', /malformed list metadata/],
];

for (const [what, text, message] of broken) {
  test(`${what} is a DecodeError`, async () => {
    const err = await failureOf(decodeList(body(chunksOf(encode(text), 3))));
    assert.ok(err instanceof StreamDecodeError, String(err));
    assert.match(err.message, message);
  });
}

test('an item larger than maxItemBytes is a DecodeError', async () => {
  const err = await failureOf(decodeList(body(chunksOf(encode(metadataFirst), 100)), { maxItemBytes: 1000 }));
  assert.ok(err instanceof StreamDecodeError);
  assert.match(err.message, /list value larger than the maximum of 1000 bytes/);
});

test('a list is iterated only once', async () => {
  const list = decodeList(body([encode(metadataFirst)]));
  await collect(list);
  assert.throws(() => list[Symbol.asyncIterator](), /only once/);
});
