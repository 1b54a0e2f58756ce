import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cutMember, parseWithoutManagedFields } from '../../../src/watch/decode/drop-managed-fields.js';
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
    assert.equal(cutMember(input, 0, ['metadata', 'managedFields']), output);
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
