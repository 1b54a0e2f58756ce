import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseLabelSelector } from '../../../src/watch/scope/parse-label-selector.js';
import { labelSelectorFromObject } from '../../../src/watch/scope/label-selector.js';
import { SelectorError } from '../../../src/watch/scope/selector-error.js';
import { ConfigError } from '../../../src/errors/raven-error.js';

// [input, normalised form]
const valid: [string, string][] = [
  ['', ''],
  ['   ', ''],
  ['app=web', 'app=web'],
  ['app == web', 'app=web'],
  ['app!=web', 'app!=web'],
  ['app=', 'app='],
  ['app', 'app'],
  ['!app', '!app'],
  ['tier in (front, back)', 'tier in (back,front)'],
  ['tier notin (a,b,a)', 'tier notin (a,b)'],
  ['tier in ()', 'tier in ()'],
  ['z=1,a.example.com/b-c_d.e=V_1,!m', 'a.example.com/b-c_d.e=V_1,!m,z=1'],
  [' env in(prod) , app ', 'app,env in (prod)'],
  [`k=${'v'.repeat(63)}`, `k=${'v'.repeat(63)}`],
];

for (const [input, normalised] of valid) {
  test(`the label selector ${JSON.stringify(input)} parses and normalises to ${JSON.stringify(normalised)}`, () => {
    const selector = parseLabelSelector(input);
    assert.equal(selector.toString(), normalised);
    assert.equal(
      parseLabelSelector(selector.toString()).toString(),
      normalised,
      'the normal form parses to itself',
    );
  });
}

// [input, position, message fragment]
const invalid: [string, number, string][] = [
  ['app in (web', 11, "expected ',' or ')' after a value, found the end"],
  ['app in web', 7, "expected '(' to open the value list, found 'web'"],
  ['app=web,', 8, 'expected a label key, found the end'],
  [',app', 0, "expected a label key, found ','"],
  ['app web', 4, "expected =, ==, !=, in, notin, ',' or the end after key 'app', found 'web'"],
  ['app=web x', 8, "expected ',' between requirements, found 'x'"],
  ['replicas>3', 8, "'>' is not supported; use =, ==, !=, in, notin, key or !key"],
  ['-app=x', 0, 'label key "-app" must be 1 to 63 characters'],
  ['Example.com/app=x', 0, 'has prefix "Example.com", which must be a lowercase DNS subdomain'],
  ['example.com/=x', 0, 'has name "", which must be 1 to 63 characters'],
  [`${'a'.repeat(64)}=x`, 0, 'must be 1 to 63 characters'],
  ['app=web_', 4, 'label value "web_" must be empty or 1 to 63 characters'],
  [`app=${'v'.repeat(64)}`, 4, 'must be empty or 1 to 63 characters'],
  ['app in (ok, bad!)', 15, "expected ',' or ')' after a value, found '!'"],
  ['!', 1, 'expected a label key, found the end'],
];

for (const [input, position, message] of invalid) {
  test(`the label selector ${JSON.stringify(input)} is rejected at position ${position}`, () => {
    assert.throws(
      () => parseLabelSelector(input),
      (err: unknown) => {
        assert.ok(err instanceof SelectorError);
        assert.ok(err instanceof ConfigError);
        assert.equal(err.position, position);
        assert.equal(err.selector, input);
        assert.ok(
          err.message.startsWith(`invalid label selector ${JSON.stringify(input)} at position ${position}: `),
          err.message,
        );
        assert.ok(err.message.includes(message), err.message);
        return true;
      },
    );
  });
}

// [selector, labels, expected]
const matching: [string, Record<string, string> | undefined, boolean][] = [
  ['', undefined, true],
  ['app=web', { app: 'web' }, true],
  ['app=web', { app: 'db' }, false],
  ['app=web', {}, false],
  ['app!=web', {}, true],
  ['app!=web', { app: 'web' }, false],
  ['app', { app: '' }, true],
  ['app', undefined, false],
  ['!app', { other: 'x' }, true],
  ['!app', { app: 'x' }, false],
  ['tier in (a,b)', { tier: 'b' }, true],
  ['tier in (a,b)', {}, false],
  ['tier notin (a,b)', {}, true],
  ['tier notin (a,b)', { tier: 'a' }, false],
  ['app=', { app: '' }, true],
  ['app=web,tier in (front),!legacy', { app: 'web', tier: 'front' }, true],
  ['app=web,tier in (front),!legacy', { app: 'web', tier: 'front', legacy: 'y' }, false],
  ['toString', {}, false],
];

for (const [selector, labels, expected] of matching) {
  test(`the label selector ${JSON.stringify(selector)} ${expected ? 'matches' : 'does not match'} ${JSON.stringify(labels)}`, () => {
    assert.equal(parseLabelSelector(selector).matches(labels), expected);
  });
}

test('a LabelSelector object becomes the same selector as its string form', () => {
  const selector = labelSelectorFromObject({
    matchLabels: { app: 'web' },
    matchExpressions: [
      { key: 'tier', operator: 'In', values: ['front', 'back'] },
      { key: 'legacy', operator: 'DoesNotExist' },
      { key: 'zone', operator: 'NotIn', values: ['a'] },
      { key: 'env', operator: 'Exists' },
    ],
  });
  assert.equal(selector.toString(), 'app=web,env,!legacy,tier in (back,front),zone notin (a)');
  assert.equal(selector.matches({ app: 'web', tier: 'back', env: 'x' }), true);
  assert.equal(selector.matches({ app: 'web', tier: 'back', env: 'x', zone: 'a' }), false);
});

const invalidObjects: [string, Parameters<typeof labelSelectorFromObject>[0], string][] = [
  [
    'an unknown operator',
    { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] },
    'matchExpressions[0].operator: unknown operator "Gt" (valid: In, NotIn, Exists, DoesNotExist)',
  ],
  [
    'In without values',
    { matchExpressions: [{ key: 'a', operator: 'In' }] },
    'matchExpressions[0].values: In needs at least one value',
  ],
  [
    'Exists with values',
    { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
    'matchExpressions[0].values: Exists takes no values',
  ],
  [
    'a bad key',
    { matchExpressions: [{ key: 'a b', operator: 'Exists' }] },
    'matchExpressions[0].key: label key "a b"',
  ],
  ['a bad matchLabels value', { matchLabels: { app: 'a b' } }, 'matchLabels.app: label value "a b"'],
  [
    'a bad value in a set',
    { matchExpressions: [{ key: 'a', operator: 'In', values: ['ok', '-no'] }] },
    'matchExpressions[0].values[1]: label value "-no"',
  ],
];

for (const [what, object, message] of invalidObjects) {
  test(`a LabelSelector object with ${what} is a ConfigError naming the member`, () => {
    assert.throws(
      () => labelSelectorFromObject(object),
      (err: unknown) => err instanceof ConfigError && err.message.startsWith(message),
    );
  });
}
