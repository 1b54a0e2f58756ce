import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseNamespaceScope, type NamespaceScopeSpec } from '../../../src/watch/scope/namespace-scope.js';
import { planNamespaceQueries } from '../../../src/watch/scope/plan-namespace-queries.js';
import { ConfigError } from '../../../src/errors/raven-error.js';

const namespaces = [
  'default',
  'kube-system',
  'kube-public',
  'team-a',
  'team-b',
  'team-legacy',
  'shop-prod',
  'prod',
  'ns-1',
  'ns-10',
];

// [spec, namespaces in scope]
const scopes: [NamespaceScopeSpec, string[]][] = [
  [undefined, namespaces],
  [[], namespaces],
  ['*', namespaces],
  ['team-a', ['team-a']],
  [
    ['team-a', 'prod'],
    ['team-a', 'prod'],
  ],
  [
    ['team-*', '!team-legacy'],
    ['team-a', 'team-b'],
  ],
  [['*-prod'], ['shop-prod']],
  [['ns-?'], ['ns-1']],
  [['!kube-*'], namespaces.filter((n) => !n.startsWith('kube-'))],
  [['*', '!kube-system'], namespaces.filter((n) => n !== 'kube-system')],
  [
    ['team-*', '*prod', '!team-b', '!shop-*'],
    ['team-a', 'team-legacy', 'prod'],
  ],
  [['  team-a '], ['team-a']],
];

for (const [spec, expected] of scopes) {
  test(`the namespace scope ${JSON.stringify(spec)} selects exactly ${expected.join(', ')}`, () => {
    const scope = parseNamespaceScope(spec);
    assert.deepEqual(
      namespaces.filter((n) => scope.matches(n)),
      expected,
    );
  });
}

// [spec, error message]
const invalid: [NamespaceScopeSpec, string][] = [
  [
    ['team-a', 'Team-B'],
    'watch.namespaces[1]: namespace "Team-B" must be at most 63 characters of a-z, 0-9 and \'-\'',
  ],
  [['-x'], 'watch.namespaces[0]: namespace "-x" must be'],
  [['a'.repeat(64)], 'must be at most 63 characters'],
  [
    ['team_*'],
    "watch.namespaces[0]: pattern \"team_*\" may contain only a-z, 0-9, '-', '*' (any run of characters) and '?' (one character)",
  ],
  [['!'], 'watch.namespaces[0]: "!" excludes nothing: write !name or !pattern'],
  [['!*'], 'watch.namespaces[0]: "!*" would exclude every namespace'],
  [[''], 'watch.namespaces[0]: empty namespace'],
  ['Prod', 'watch.namespaces: namespace "Prod" must be'],
  [['a', '!a'], 'watch.namespaces: every namespace listed is also excluded, so nothing would be watched'],
];

for (const [spec, message] of invalid) {
  test(`the namespace scope ${JSON.stringify(spec)} is rejected with a message naming the entry`, () => {
    assert.throws(
      () => parseNamespaceScope(spec, { path: 'watch.namespaces' }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.ok(err.message.includes(message), err.message);
        return true;
      },
    );
  });
}

test('a single exact namespace is planned as one namespaced watch with no client-side filter', () => {
  assert.deepEqual(planNamespaceQueries(parseNamespaceScope('team-a')), {
    mode: 'namespaced',
    namespaces: ['team-a'],
    fieldSelector: undefined,
  });
});

test('several exact namespaces are planned as one watch per namespace, minus any excluded', () => {
  const plan = planNamespaceQueries(parseNamespaceScope(['a', 'b', 'c', '!b']), {
    fieldSelector: 'status.phase=Running',
  });
  assert.deepEqual(plan, {
    mode: 'namespaced',
    namespaces: ['a', 'c'],
    fieldSelector: 'status.phase=Running',
  });
});

test('more exact namespaces than maxNamespacedWatches become one all-namespaces watch filtered client-side', () => {
  const plan = planNamespaceQueries(parseNamespaceScope(['a', 'b', 'c']), { maxNamespacedWatches: 2 });
  assert.ok(plan.mode === 'all-namespaces' && plan.filter !== undefined);
  assert.deepEqual(['a', 'b', 'c', 'd'].filter(plan.filter), ['a', 'b', 'c']);
  assert.equal(plan.fieldSelector, undefined);
});

test('all namespaces are planned as one all-namespaces watch with no filter', () => {
  assert.deepEqual(
    planNamespaceQueries(parseNamespaceScope(undefined), { fieldSelector: 'spec.nodeName=n1' }),
    {
      mode: 'all-namespaces',
      fieldSelector: 'spec.nodeName=n1',
      filter: undefined,
    },
  );
});

test('a pattern with an exact exclusion is one all-namespaces watch, the exclusion also pushed to the server', () => {
  const plan = planNamespaceQueries(parseNamespaceScope(['team-*', '!team-legacy']), {
    fieldSelector: 'status.phase=Running',
  });
  assert.ok(plan.mode === 'all-namespaces' && plan.filter !== undefined);
  assert.equal(plan.fieldSelector, 'metadata.namespace!=team-legacy,status.phase=Running');
  assert.deepEqual(namespaces.filter(plan.filter), ['team-a', 'team-b']);
});

test('exact exclusions are not pushed to the server when the field selector already constrains the namespace', () => {
  const plan = planNamespaceQueries(parseNamespaceScope(['!kube-system']), {
    fieldSelector: 'metadata.namespace!=default',
  });
  assert.ok(plan.mode === 'all-namespaces' && plan.filter !== undefined);
  assert.equal(plan.fieldSelector, 'metadata.namespace!=default');
  assert.equal(plan.filter('kube-system'), false);
});

test('pattern exclusions stay client-side only', () => {
  const plan = planNamespaceQueries(parseNamespaceScope(['!kube-*', '!default']));
  assert.ok(plan.mode === 'all-namespaces' && plan.filter !== undefined);
  assert.equal(plan.fieldSelector, 'metadata.namespace!=default');
  assert.deepEqual(
    namespaces.filter(plan.filter),
    namespaces.filter((n) => !n.startsWith('kube-') && n !== 'default'),
  );
});
