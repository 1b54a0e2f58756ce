import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cutMember,
  parseBytesWithoutManagedFields,
  parseWithoutManagedFields,
} from '../../../src/watch/decode/drop-managed-fields.js';
import { managedFieldsSpan, MANAGED_FIELDS_PARENTS } from '../../../src/watch/decode/managed-fields-span.js';
import { realisticPod } from './fixtures.js';

function parseThenDelete(text: string, inEvent: boolean): unknown {
  const value: unknown = JSON.parse(text);
  const holder = inEvent ? field(value, 'object') : value;
  const meta = field(holder, 'metadata');
  if (typeof meta === 'object' && meta !== null && !Array.isArray(meta)) {
    delete (meta as { managedFields?: unknown }).managedFields;
  }
  return value;
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

const pods = [realisticPod('web-0', '1'), realisticPod('web-é', '2', 'ns-日本')];

test('dropping managedFields from realistic pods equals parse-then-delete', () => {
  for (const pod of pods) {
    for (const text of [JSON.stringify(pod), JSON.stringify(pod, null, 2)]) {
      assert.deepEqual(parseWithoutManagedFields(text, 'object'), parseThenDelete(text, false));
      const event = JSON.stringify({ type: 'MODIFIED', object: pod });
      assert.deepEqual(parseWithoutManagedFields(event, 'event'), parseThenDelete(event, true));
    }
  }
});

test('managedFields is cut from the text when it is the first, a middle, the last or the only member', () => {
  const cases: [string, string][] = [
    ['{"metadata":{"managedFields":[{"a":"]"}],"name":"x"}}', '{"metadata":{"name":"x"}}'],
    ['{"metadata":{"name":"x","managedFields":[],"uid":"u"}}', '{"metadata":{"name":"x","uid":"u"}}'],
    ['{"metadata":{"name":"x" , "managedFields" : [ ] }}', '{"metadata":{"name":"x"  }}'],
    ['{"metadata":{ "managedFields":[{}] }}', '{"metadata":{  }}'],
  ];
  for (const [input, output] of cases) {
    assert.equal(cutMember(Buffer.from(input), 0, ['metadata', 'managedFields'])?.toString(), output);
    assert.deepEqual(parseWithoutManagedFields(input, 'object'), parseThenDelete(input, false));
  }
});

test('objects without managedFields, or shaped oddly, still equal parse-then-delete', () => {
  const inputs = [
    '{"metadata":{"name":"x"}}',
    '{"metadata":null}',
    '{"metadata":"x"}',
    '{"spec":{"metadata":{"managedFields":[1]}}}',
    '[1,2]',
    '"text"',
    '{"metadata":{"managedFields":[1],"managedFields":[2]}}',
    '{"metadata":{"annotations":{"managedFields":"kept"},"managedFields":[]}}',
  ];
  for (const input of inputs) {
    assert.deepEqual(parseWithoutManagedFields(input, 'object'), parseThenDelete(input, false), input);
  }
});

test('malformed text throws the SyntaxError JSON.parse throws', () => {
  assert.throws(() => parseWithoutManagedFields('{"metadata":{"name":}}', 'object'), SyntaxError);
});

test('found in the raw bytes, managedFields is cut at exactly the member and its comma', () => {
  const cases: [string, string][] = [
    ['{"metadata":{"managedFields":[{"a":"]"}],"name":"x"}}', '{"metadata":{"name":"x"}}'],
    ['{"metadata":{"name":"x","managedFields":[],"uid":"u"}}', '{"metadata":{"name":"x","uid":"u"}}'],
    ['{"metadata":{"name":"x","managedFields":null}}', '{"metadata":{"name":"x"}}'],
    ['{"metadata":{"managedFields":[{"f:k":"{\\"}[\\\\"}]}}', '{"metadata":{}}'],
  ];
  for (const [input, output] of cases) {
    const bytes = Buffer.from(input);
    const span = managedFieldsSpan(bytes, MANAGED_FIELDS_PARENTS.object);
    assert.ok(span !== undefined, input);
    assert.equal(bytes.toString('utf8', 0, span[0]) + bytes.toString('utf8', span[1]), output);
  }
});

test('a managedFields key anywhere but in the metadata is never taken for it', () => {
  const inputs = [
    '{"spec":{"managedFields":[1]},"metadata":{"name":"x","managedFields":[2]}}',
    '{"spec":{"metadata":{"managedFields":[1]}}}',
    '{"metadata":{"labels":{"managedFields":"x"}}}',
    '{"metadata":{"annotations":{"a":"\\"managedFields\\":[]"},"name":"x"}}',
    '{"items":[{"metadata":{"managedFields":[1]}}]}',
    '{"metadata":{"ownerReferences":[{"managedFields":[]}],"managedFields":[3]}}',
  ];
  for (const input of inputs) {
    const bytes = Buffer.from(input);
    assert.deepEqual(parseBytesWithoutManagedFields(bytes, 'object'), parseThenDelete(input, false), input);
    const span = managedFieldsSpan(bytes, MANAGED_FIELDS_PARENTS.object);
    if (span !== undefined) {
      const rest = bytes.toString('utf8', 0, span[0]) + bytes.toString('utf8', span[1]);
      assert.deepEqual(JSON.parse(rest), parseThenDelete(input, false), `cut of ${input}`);
    }
  }
});

test('parsing raw bytes without managedFields equals parse-then-delete, in events and objects, in any script', () => {
  for (const pod of pods) {
    for (const text of [JSON.stringify(pod), JSON.stringify(pod, null, 2)]) {
      assert.deepEqual(
        parseBytesWithoutManagedFields(Buffer.from(text), 'object'),
        parseThenDelete(text, false),
      );
      const event = JSON.stringify({ type: 'MODIFIED', object: pod });
      assert.deepEqual(
        parseBytesWithoutManagedFields(Buffer.from(event), 'event'),
        parseThenDelete(event, true),
      );
    }
  }
  const compact = Buffer.from(JSON.stringify(pods[1]));
  assert.ok(managedFieldsSpan(compact, MANAGED_FIELDS_PARENTS.object) !== undefined, 'found in compact JSON');
});

test('malformed bytes throw what JSON.parse throws', () => {
  for (const input of [
    '{"metadata":{"managedFields":[1,}',
    '{"metadata":{"managedFields":[1]',
    '{"metadata"',
  ]) {
    assert.throws(() => parseBytesWithoutManagedFields(Buffer.from(input), 'object'), SyntaxError, input);
  }
});
