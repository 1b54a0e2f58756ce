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
