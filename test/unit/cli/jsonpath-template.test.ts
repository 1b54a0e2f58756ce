import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  columnText,
  compileTemplate,
  parseCustomColumns,
  TemplateError,
} from '../../../src/cli/jsonpath-template.js';
import { parseWatchFormat } from '../../../src/cli/format-watch.js';
import { UsageError } from '../../../src/cli/usage-error.js';

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-0', labels: { 'app.kubernetes.io/name': 'web' } },
  spec: {
    containers: [
      { name: 'app', image: 'nginx:1.27' },
      { name: 'sidecar', image: 'envoy:1.30' },
    ],
  },
  status: {
    phase: 'Running',
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'PodScheduled', status: 'True' },
    ],
  },
};

test('a template prints fields, quoted literals with escapes, and text between blocks', () => {
  const t = compileTemplate('{.metadata.name}{"\\t"}{.status.phase}{"\\n"}');
  assert.equal(t(pod), 'web-0\tRunning\n');
  assert.equal(compileTemplate('name={.metadata.name};')(pod), 'name=web-0;');
});

test('several results are joined by a space, objects print as JSON, missing fields as nothing', () => {
  assert.equal(compileTemplate('{.spec.containers[*].image}')(pod), 'nginx:1.27 envoy:1.30');
  assert.equal(compileTemplate('{.spec.containers[0]}')(pod), '{"name":"app","image":"nginx:1.27"}');
  assert.equal(compileTemplate('[{.status.nothing}]')(pod), '[]');
});

test('range loops over a selection with paths relative to each item, until end', () => {
  const t = compileTemplate('{range .spec.containers[*]}{.name}={.image}{"\\n"}{end}');
  assert.equal(t(pod), 'app=nginx:1.27\nsidecar=envoy:1.30\n');
});

test('filters, quoted keys and recursive descent select as kubectl does', () => {
  assert.equal(compileTemplate('{.status.conditions[?(@.type=="Ready")].status}')(pod), 'True');
  assert.equal(compileTemplate("{.metadata.labels['app.kubernetes.io/name']}")(pod), 'web');
  assert.equal(compileTemplate('{..image}')(pod), 'nginx:1.27 envoy:1.30');
});

test('a template that does not parse names the position and what would be valid', () => {
  assert.throws(() => compileTemplate('{.metadata.name'), /unclosed "\{" at position 1/);
  assert.throws(() => compileTemplate('{range .items[*]}{.a}'), /\{range\} at position 1 .* has no \{end\}/);
  assert.throws(() => compileTemplate('{end}'), /has no \{range \.\.\.\}/);
  assert.throws(
    () => compileTemplate('{metadata.name}'),
    (err: unknown) => {
      assert.ok(err instanceof TemplateError);
      assert.match(err.message, /start it with "\." \(e\.g\. \{\.metadata\.name\}\)/);
      return true;
    },
  );
});

test('custom columns take HEADER:PATH pairs, with braces or without, commas inside filters kept', () => {
  const columns = parseCustomColumns(
    'NAME:.metadata.name,IMAGES:{.spec.containers[*].image},READY:.status.conditions[?(@.type=="Ready")].status',
  );
  assert.deepEqual(
    columns.map((c) => c.header),
    ['NAME', 'IMAGES', 'READY'],
  );
  assert.deepEqual(
    columns.map((c) => columnText(c, pod)),
    ['web-0', 'nginx:1.27,envoy:1.30', 'True'],
  );
  assert.deepEqual(
    parseCustomColumns('X:.nope').map((c) => columnText(c, pod)),
    ['<none>'],
  );
  assert.throws(() => parseCustomColumns('NAME'), /must be HEADER:JSONPATH/);
});

test('--output names what is valid when the format is unknown or its argument is bad', () => {
  assert.deepEqual(parseWatchFormat('name'), { kind: 'name' });
  assert.equal(parseWatchFormat('jsonpath={.metadata.name}').kind, 'jsonpath');
  assert.throws(
    () => parseWatchFormat('xml'),
    (err: unknown) => {
      assert.ok(err instanceof UsageError);
      assert.match(
        err.message,
        /--output must be one of table, wide, diff, json, yaml, name, jsonpath=TEMPLATE, custom-columns=SPEC; got "xml"/,
      );
      return true;
    },
  );
  assert.throws(() => parseWatchFormat('jsonpath='), /--output jsonpath needs a template/);
  assert.throws(() => parseWatchFormat('jsonpath={.a'), /--output jsonpath: unclosed "\{"/);
  assert.throws(
    () => parseWatchFormat('custom-columns=NAME'),
    /--output custom-columns: custom column "NAME" must be/,
  );
});

/** The input of kubectl's JSONPath reference page, in the shape `raven get` prints a list. */
const list = {
  kind: 'List',
  items: [
    {
      kind: 'None',
      metadata: { name: '127.0.0.1', labels: { 'kubernetes.io/hostname': '127.0.0.1' } },
      status: { capacity: { cpu: '4' }, addresses: [{ type: 'LegacyHostIP', address: '127.0.0.1' }] },
    },
    {
      kind: 'None',
      metadata: { name: '127.0.0.2' },
      status: { capacity: { cpu: '8' }, addresses: [{ type: 'LegacyHostIP', address: '127.0.0.2' }] },
    },
  ],
  users: [
    { name: 'myself', user: {} },
    { name: 'e2e', user: { username: 'admin', password: 'secret' } },
  ],
  data: { 'app.yaml': 'replicas: 3\n', plain: 'p' },
};

// Each row: a template, what kubectl prints for it on `list`.
const kubectlForms: [string, string][] = [
  ['kind is {.kind}', 'kind is List'],
  ['{.kind}', 'List'],
  ["{['kind']}", 'List'],
  ['{.items[*].metadata.name}', '127.0.0.1 127.0.0.2'],
  ['{.items[0].metadata.name}', '127.0.0.1'],
  ['{.items[-1:].metadata.name}', '127.0.0.2'],
  ['{.items[0:1].metadata.name}', '127.0.0.1'],
  ['{.users[0].name}', 'myself'],
  ['{.users[?(@.name=="e2e")].user.password}', 'secret'],
  ['{.users[?(@.name!="e2e")].name}', 'myself'],
  ['{.items[?(@.status.capacity.cpu=="8")].metadata.name}', '127.0.0.2'],
  ['{.items[*].status.addresses[?(@.type=="LegacyHostIP")].address}', '127.0.0.1 127.0.0.2'],
  ["{.items[*]['metadata.name', 'status.capacity']}", '127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}'],
  ['{.items[0].metadata.labels.kubernetes\\.io/hostname}', '127.0.0.1'],
  ["{.items[0].metadata.labels['kubernetes\\.io/hostname']}", '127.0.0.1'],
  ["{.items[0].metadata.labels['kubernetes.io/hostname']}", '127.0.0.1'],
  ['{.data.app\\.yaml}', 'replicas: 3\n'],
  ["{.data['app.yaml']}", 'replicas: 3\n'],
  ['{..name}', '127.0.0.1 127.0.0.2 myself e2e'],
  ['{range .items[*]}[{.metadata.name}, {.status.capacity.cpu}] {end}', '[127.0.0.1, 4] [127.0.0.2, 8] '],
  ["{range .items[*]}{.metadata.name}{'\\t'}{end}", '127.0.0.1\t127.0.0.2\t'],
  ['{range .items[*]}{.metadata.name}{"\\n"}{end}', '127.0.0.1\n127.0.0.2\n'],
  ['{.items[0].status.capacity}', '{"cpu":"4"}'],
  ['{.data.missing}', ''],
  ['{.nothing[*].here}', ''],
];

for (const [template, expected] of kubectlForms)
  test(`the kubectl form ${template} prints what kubectl prints`, () => {
    assert.equal(compileTemplate(template)(list), expected);
  });

test('{$}, {@} and {.} print the whole object as JSON', () => {
  const small = { a: { 'b.c': 1 } };
  for (const template of ['{$}', '{@}', '{.}'])
    assert.equal(compileTemplate(template)(small), '{"a":{"b.c":1}}', template);
  assert.equal(compileTemplate('{.a.b\\.c}')(small), '1');
  assert.equal(compileTemplate("{['a']['b.c']}")(small), '1');
  assert.equal(compileTemplate("{.a['b.c']}")(small), '1');
});

test('a quoted key the object lacks is read as kubectl reads it, a path', () => {
  assert.equal(compileTemplate("{['a.b']}")({ a: { b: 'nested' } }), 'nested');
  assert.equal(compileTemplate("{['a.b']}")({ 'a.b': 'literal', a: { b: 'nested' } }), 'literal');
});

test('custom columns read the same paths, with or without the leading dot', () => {
  const columns = parseCustomColumns(
    "KEY:.data.app\\.yaml,BRACKET:{.data['app.yaml']},BARE:data.plain,NODES:.items[*].metadata.name",
  );
  assert.deepEqual(
    columns.map((c) => columnText(c, list)),
    ['replicas: 3', 'replicas: 3', 'p', '127.0.0.1,127.0.0.2'],
  );
});

test('a subscript that is not one names what would be valid', () => {
  assert.throws(() => compileTemplate('{.items[abc]}'), /\[abc\] .* is not a valid subscript: use \[0\]/);
  assert.throws(() => compileTemplate('{.items[0}'), /unclosed "\["/);
});
