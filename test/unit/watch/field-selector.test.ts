import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeFieldValue, parseFieldSelector } from '../../../src/watch/scope/field-selector.js';
import { SelectorError } from '../../../src/watch/scope/selector-error.js';

// [input, normalised form]
const valid: [string, string][] = [
  ['', ''],
  ['metadata.name=web', 'metadata.name=web'],
  ['metadata.name==web', 'metadata.name=web'],
  ['status.phase!=Running,spec.nodeName=node-1', 'spec.nodeName=node-1,status.phase!=Running'],
  ['spec.nodeName=', 'spec.nodeName='],
  ['metadata.name=a\\,b\\=c\\\\d', 'metadata.name=a\\,b\\=c\\\\d'],
  ['a=1,,b=2,', 'a=1,b=2'],
  ['type!=kubernetes.io/service-account-token', 'type!=kubernetes.io/service-account-token'],
];

for (const [input, normalised] of valid) {
  test(`the field selector ${JSON.stringify(input)} parses and normalises to ${JSON.stringify(normalised)}`, () => {
    const selector = parseFieldSelector(input);
    assert.equal(selector.toString(), normalised);
    assert.equal(parseFieldSelector(normalised).toString(), normalised);
  });
}

test('escaped commas and equals signs are part of the value', () => {
  assert.deepEqual(parseFieldSelector('metadata.name=a\\,b\\=c\\\\').requirements, [
    { field: 'metadata.name', operator: '=', value: 'a,b=c\\' },
  ]);
  assert.equal(escapeFieldValue('a,b=c\\'), 'a\\,b\\=c\\\\');
});

// [input, position, message fragment]
const invalid: [string, number, string][] = [
  [
    'metadata.name',
    0,
    'term "metadata.name" has no operator; expected field=value, field==value or field!=value',
  ],
  ['a=1,metadata.name', 4, 'has no operator'],
  ['=web', 0, 'field "" must be a dotted path'],
  ['meta..name=x', 0, 'field "meta..name" must be a dotted path'],
  ['metadata.name=a=b', 15, "unescaped '=' in a value; write it as '\\='"],
  ['metadata.name=a\\nb', 15, "invalid escape sequence '\\n' in a value; only \\\\, \\, and \\= are allowed"],
  ['a=1,b=x\\', 7, "invalid escape sequence '\\'"],
];

for (const [input, position, message] of invalid) {
  test(`the field selector ${JSON.stringify(input)} is rejected at position ${position}`, () => {
    assert.throws(
      () => parseFieldSelector(input),
      (err: unknown) => {
        assert.ok(err instanceof SelectorError);
        assert.equal(err.position, position);
        assert.ok(
          err.message.startsWith(`invalid field selector ${JSON.stringify(input)} at position ${position}: `),
          err.message,
        );
        assert.ok(err.message.includes(message), err.message);
        return true;
      },
    );
  });
}

const pod = {
  metadata: { name: 'web-0', namespace: 'team-a' },
  spec: { nodeName: 'node-1', priority: 5 },
  status: { phase: 'Running' },
};

// [selector, object, expected]
const matching: [string, unknown, boolean][] = [
  ['metadata.name=web-0', pod, true],
  ['metadata.namespace!=team-a', pod, false],
  ['status.phase=Running,spec.nodeName=node-1', pod, true],
  ['status.phase=Running,spec.nodeName=node-2', pod, false],
  ['spec.nodeName=', { spec: {} }, true],
  ['spec.nodeName!=', { spec: {} }, false],
  ['spec.priority=5', pod, true],
  ['metadata.name.deeper=', pod, true],
  ['', pod, true],
];

for (const [selector, object, expected] of matching) {
  test(`the field selector ${JSON.stringify(selector)} ${expected ? 'matches' : 'does not match'} ${JSON.stringify(object)}`, () => {
    assert.equal(parseFieldSelector(selector).matches(object), expected);
  });
}
