import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expandString } from '../../../../src/raven/config/env-substitution.js';
import { suggest } from '../../../../src/util/did-you-mean.js';
import { formatConfigPath } from '../../../../src/errors/config-path.js';

const env = { A: 'a', EMPTY: '' };

const expansions: [string, string][] = [
  ['plain', 'plain'],
  ['${A}', 'a'],
  ['x-${A}-${A}', 'x-a-a'],
  ['${EMPTY}', ''],
  ['${MISSING:-fallback}', 'fallback'],
  ['${EMPTY:-fallback}', 'fallback'],
  ['${A:-fallback}', 'a'],
  ['${MISSING:-}', ''],
  ['$${A}', '${A}'],
  ['cost: $5', 'cost: $5'],
  ['${MISSING:-a:-b}', 'a:-b'],
];

for (const [input, output] of expansions) {
  test(`${JSON.stringify(input)} expands to ${JSON.stringify(output)}`, () => {
    const result = expandString(input, env);
    assert.ok('value' in result, JSON.stringify(result));
    assert.equal(result.value, output);
  });
}

test('every unset variable without a default is reported', () => {
  assert.deepEqual(expandString('${X}/${Y}', {}), {
    problems: [
      'environment variable X is not set; set it, or give a default with ${X:-value}',
      'environment variable Y is not set; set it, or give a default with ${Y:-value}',
    ],
  });
});

test('a reference that is not a variable name is reported', () => {
  const result = expandString('${1X}', {});
  assert.ok('problems' in result);
  assert.match(result.problems[0] ?? '', /invalid reference "\$\{1X\}" at position 0/);
});

test('suggestions are offered for typos and withheld for unrelated words', () => {
  assert.equal(suggest('sinsk', ['sinks', 'routes']), 'sinks');
  assert.equal(suggest('format', ['path', 'rotate']), undefined);
  assert.equal(suggest('warning', ['warn', 'error']), 'warn');
});

test('paths are written as a reader would type them', () => {
  assert.equal(formatConfigPath(['sinks', 2, 'url']), 'sinks[2].url');
  assert.equal(formatConfigPath(['sinks', 0, 'headers', 'X Key']), 'sinks[0].headers["X Key"]');
  assert.equal(formatConfigPath([]), '');
});
