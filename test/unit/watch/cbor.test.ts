import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { CborError, cborItemEnd, decodeCbor, splitCborList } from '../../../src/watch/decode/cbor.js';
import { CborSequenceSplitter } from '../../../src/watch/decode/cbor-sequence.js';
import { decodeCborList } from '../../../src/watch/decode/decode-cbor-list.js';
import { checkCborStreamEnd, decodeCborWatchItem } from '../../../src/watch/decode/decode-watch-events.js';
import { StreamDecodeError } from '../../../src/watch/decode/stream-decode-error.js';
import { ApiError } from '../../../src/errors/api-error.js';
import { DecodeError } from '../../../src/errors/raven-error.js';
import { body, chunksOf, realisticPod } from './fixtures.js';
import { kubeCbor, kubeCborEvent } from '../../harness/kube-cbor.js';

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);

test('a realistic pod decodes to what JSON.parse gives for its JSON form', () => {
  const pod = realisticPod('web-0', '41');
  assert.deepEqual(decodeCbor(kubeCbor(pod)), JSON.parse(JSON.stringify(pod)));
});

test('byte strings are UTF-8 text, as Kubernetes writes every string and field name', () => {
  const value = { 'naïve-ключ': 'värde ✓ 🐦', short: 'a', long: 'x'.repeat(300) };
  assert.deepEqual(decodeCbor(kubeCbor(value)), value);
  // A text string (major type 3) is read the same way.
  assert.equal(decodeCbor(bytes(0x63, 0x61, 0x62, 0x63)), 'abc');
});

test('a []byte under tag 22 becomes the base64 string JSON shows', () => {
  const secret = { data: { password: Uint8Array.from(Buffer.from('s3cret\u0000\u00ff', 'latin1')) } };
  assert.deepEqual(decodeCbor(kubeCbor(secret)), {
    data: { password: Buffer.from('s3cret\u0000\u00ff', 'latin1').toString('base64') },
  });
});

test('numbers: every integer head size, negatives, half, single and double floats', () => {
  assert.equal(decodeCbor(bytes(0x17)), 23);
  assert.equal(decodeCbor(bytes(0x18, 0xff)), 255);
  assert.equal(decodeCbor(bytes(0x19, 0x01, 0x00)), 256);
  assert.equal(decodeCbor(bytes(0x1a, 0x00, 0x01, 0x00, 0x00)), 65536);
  assert.equal(decodeCbor(bytes(0x1b, 0, 0, 0, 1, 0, 0, 0, 0)), 2 ** 32);
  assert.equal(decodeCbor(bytes(0x20)), -1);
  assert.equal(decodeCbor(bytes(0x38, 0x63)), -100);
  assert.equal(decodeCbor(bytes(0xf9, 0x3c, 0x00)), 1);
  assert.equal(decodeCbor(bytes(0xf9, 0xc4, 0x00)), -4);
  assert.equal(decodeCbor(bytes(0xf9, 0x00, 0x01)), 2 ** -24);
  assert.equal(decodeCbor(bytes(0xf9, 0x7c, 0x00)), Infinity);
  assert.ok(Number.isNaN(decodeCbor(bytes(0xf9, 0x7e, 0x00))));
  assert.equal(decodeCbor(bytes(0xfa, 0x3f, 0xc0, 0x00, 0x00)), 1.5);
  assert.equal(decodeCbor(kubeCbor(0.1)), 0.1);
  assert.deepEqual(decodeCbor(bytes(0x83, 0xf4, 0xf5, 0xf6)), [false, true, null]);
  assert.equal(decodeCbor(bytes(0xf7)), null);
});

test('indefinite-length strings, arrays and maps are read too', () => {
  // (_ h'6869', h'21'), [_ 1, 2], {_ "a": 1}
  assert.equal(decodeCbor(bytes(0x5f, 0x42, 0x68, 0x69, 0x41, 0x21, 0xff)), 'hi!');
  assert.deepEqual(decodeCbor(bytes(0x9f, 0x01, 0x02, 0xff)), [1, 2]);
  assert.deepEqual(decodeCbor(bytes(0xbf, 0x41, 0x61, 0x01, 0xff)), { a: 1 });
});

test('a __proto__ field is an own property, never the prototype', () => {
  const value = decodeCbor(kubeCbor(JSON.parse('{"__proto__": {"polluted": true}}'))) as Record<
    string,
    unknown
  >;
  assert.deepEqual(Object.keys(value), ['__proto__']);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(Object.getPrototypeOf(value), Object.prototype);
});

test('dropManagedFields skips metadata.managedFields and nothing else', () => {
  const pod = realisticPod('web-0', '41') as {
    metadata: Record<string, unknown>;
    spec: Record<string, unknown>;
  };
  assert.ok(Array.isArray(pod.metadata.managedFields));
  const withOther = { ...pod, spec: { ...pod.spec, managedFields: 'kept: not under metadata' } };
  const decoded = decodeCbor(kubeCbor(withOther), { dropManagedFields: true }) as typeof withOther;
  assert.equal(decoded.metadata.managedFields, undefined);
  assert.equal(decoded.spec.managedFields, 'kept: not under metadata');
  const { managedFields: _, ...rest } = pod.metadata;
  assert.deepEqual(decoded.metadata, rest);
});

test('malformed bytes fail with a CborError (a DecodeError) naming the byte', () => {
  const cases: [Uint8Array, RegExp][] = [
    [bytes(), /truncated at byte 0/],
    [bytes(0x82, 0x01), /truncated at byte 2/],
    [bytes(0x44, 0x61), /truncated string/],
    [bytes(0x1c), /reserved additional information 28/],
    [bytes(0x01, 0x02), /trailing bytes after the item at byte 1/],
    [bytes(0xf8), /truncated at byte 1/],
    [bytes(0xf8, 0x20), /unexpected simple value 32/],
  ];
  for (const [input, message] of cases) {
    assert.throws(
      () => decodeCbor(input),
      (error: unknown) =>
        error instanceof CborError && error instanceof DecodeError && message.test(error.message),
      String(message),
    );
  }
});

test('cborItemEnd finds where an item ends, and -1 while only its beginning has arrived', () => {
  const item = kubeCbor(realisticPod('a', '1'));
  assert.equal(cborItemEnd(item, 0), item.length);
  for (let cut = 0; cut < item.length; cut++)
    assert.equal(cborItemEnd(item.subarray(0, cut), 0), -1, `cut ${cut}`);
  const two = Buffer.concat([item, item]);
  assert.equal(cborItemEnd(two, item.length), 2 * item.length);
  assert.throws(() => cborItemEnd(bytes(0xff), 0), CborError);
});

test('a CBOR sequence splits into the same items whatever the chunk boundaries', () => {
  const items = [
    kubeCborEvent('ADDED', realisticPod('a', '1')),
    kubeCborEvent('MODIFIED', realisticPod('a', '2')),
    kubeCborEvent('DELETED', { metadata: { name: 'b', resourceVersion: '3' } }),
  ];
  const stream = Buffer.concat(items);
  for (const size of [1, 2, 7, 64, 1000, stream.length]) {
    const splitter = new CborSequenceSplitter();
    const out = chunksOf(stream, size).flatMap((chunk) => splitter.push(chunk));
    assert.deepEqual(
      out.map((i) => Buffer.from(i.bytes)),
      items.map((i) => Buffer.from(i)),
      `chunks of ${size}`,
    );
    assert.deepEqual(
      out.map((i) => [i.line, i.byteOffset]),
      [
        [1, 0],
        [2, items[0]?.length],
        [3, (items[0]?.length ?? 0) + (items[1]?.length ?? 0)],
      ],
    );
    assert.equal(splitter.end(), undefined);
  }
});

test('an item gathered from chunks is a copy: later chunks cannot change it', () => {
  const item = kubeCborEvent('ADDED', { metadata: { name: 'a' } });
  const splitter = new CborSequenceSplitter();
  const first = Uint8Array.from(item.subarray(0, 5));
  assert.deepEqual(splitter.push(first), []);
  const [whole] = splitter.push(Uint8Array.from(item.subarray(5)));
  first.fill(0);
  assert.deepEqual(Buffer.from(whole?.bytes ?? []), Buffer.from(item));
});

test('a stream that ends inside an item, or carries garbage, is a StreamDecodeError', () => {
  const item = kubeCborEvent('ADDED', { metadata: { name: 'a' } });
  const splitter = new CborSequenceSplitter();
  splitter.push(item.subarray(0, item.length - 1));
  assert.throws(
    () => checkCborStreamEnd(splitter),
    /stream ended in the middle of a CBOR data item at line 1/,
  );
  assert.throws(() => new CborSequenceSplitter().push(bytes(0xff)), StreamDecodeError);
  const small = new CborSequenceSplitter(16);
  assert.throws(() => small.push(item.subarray(0, 20)), /CBOR data item longer than 16 bytes/);
});

test('a CBOR watch event decodes like its JSON line: objects, ERROR as ApiError, bad types refused', () => {
  const pod = realisticPod('a', '7');
  const at = (b: Uint8Array) => ({ bytes: b, byteOffset: 0, line: 1 });
  assert.deepEqual(decodeCborWatchItem(at(kubeCborEvent('ADDED', pod))), {
    type: 'ADDED',
    object: JSON.parse(JSON.stringify(pod)) as unknown,
  });
  const error = decodeCborWatchItem(
    at(
      kubeCborEvent('ERROR', {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'Expired',
        code: 410,
        message: 'too old',
      }),
    ),
  );
  if (error?.type !== 'ERROR') assert.fail('expected an ERROR event');
  assert.ok(error.error instanceof ApiError);
  assert.equal(error.error.statusCode, 410);
  assert.throws(() => decodeCborWatchItem(at(kubeCborEvent('SOMETHING', pod))), /unknown type "SOMETHING"/);
  assert.throws(() => decodeCborWatchItem(at(kubeCbor([1, 2]))), /watch event is not a JSON object/);
  assert.throws(() => decodeCborWatchItem(at(bytes(0x82, 0x01))), /malformed CBOR watch event/);
  const dropped = decodeCborWatchItem(at(kubeCborEvent('ADDED', pod)), { dropManagedFields: true });
  assert.equal(
    (dropped as { object: { metadata: { managedFields?: unknown } } }).object.metadata.managedFields,
    undefined,
  );
  const seen: string[] = [];
  const filtered = decodeCborWatchItem(at(kubeCborEvent('MODIFIED', pod)), {
    filter: (peek) => {
      seen.push(`${peek.type} ${peek.name ?? ''} ${peek.resourceVersion ?? ''}`);
      return false;
    },
  });
  assert.equal(filtered, undefined);
  assert.deepEqual(seen, ['MODIFIED a 7']);
});

test('a CBOR list: fields decoded, items each from its own bytes, filter applied, checks as for JSON', async () => {
  const pods = [realisticPod('a', '1'), realisticPod('b', '2')];
  const list = kubeCbor({
    kind: 'PodList',
    apiVersion: 'v1',
    metadata: { resourceVersion: '9', continue: 'x' },
    items: pods,
  });
  const parts = splitCborList(list);
  assert.equal(parts.items?.length, 2);
  assert.deepEqual(parts.fields, {
    kind: 'PodList',
    apiVersion: 'v1',
    metadata: { resourceVersion: '9', continue: 'x' },
  });
  const decoded = await decodeCborList(body(chunksOf(list, 100)), { filter: (peek) => peek.name !== 'b' });
  assert.deepEqual(
    decoded.items.map((i) => i.object),
    [JSON.parse(JSON.stringify(pods[0]))],
  );
  assert.deepEqual(decodeCbor(decoded.items[0]?.bytes ?? bytes()), JSON.parse(JSON.stringify(pods[0])));
  assert.deepEqual(decoded.result, {
    kind: 'PodList',
    apiVersion: 'v1',
    metadata: { resourceVersion: '9', continue: 'x' },
    itemCount: 2,
  });
  // Items the server wrote without a type are given the list's, first.
  const {
    kind: _kind,
    apiVersion: _apiVersion,
    ...bare
  } = JSON.parse(JSON.stringify(pods[0])) as Record<string, unknown>;
  const untyped = await decodeCborList(
    body([kubeCbor({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [bare] })]),
  );
  assert.deepEqual(untyped.items[0]?.object, JSON.parse(JSON.stringify(pods[0])));
  assert.deepEqual(Object.keys(untyped.items[0]?.object ?? {}).slice(0, 2), ['kind', 'apiVersion']);
  const empty = await decodeCborList(body([kubeCbor({ kind: 'PodList', metadata: {}, items: null })]));
  assert.deepEqual(empty.items, []);
  const refusals: [unknown, RegExp][] = [
    [{ kind: 'Pod', items: [] }, /its kind does not end in "List"/],
    [{ items: [] }, /the body has no kind/],
    [{ kind: 'PodList' }, /the PodList body has no items/],
    [{ kind: 'PodList', items: 3 }, /neither an array nor null/],
    [{ kind: 'PodList', metadata: 1, items: [] }, /list metadata is not an object/],
    [{ kind: 'PodList', items: [1] }, /list item is not an object/],
    [[1], /a list body is not a CBOR map/],
  ];
  for (const [value, message] of refusals) {
    await assert.rejects(
      decodeCborList(body([kubeCbor(value)])),
      (error: unknown) => {
        return error instanceof StreamDecodeError && message.test(error.message);
      },
      String(message),
    );
  }
});
