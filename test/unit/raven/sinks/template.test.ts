import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTemplatePath, renderTemplate } from '../../../../src/raven/model/template.js';
import { sampleEvent } from './fixtures.js';

test('dotted paths of the event are substituted', () => {
  const text = renderTemplate(
    '{{type}} {{resource.kind}} {{namespace}}/{{name}} by {{ watcher }}',
    sampleEvent(),
  );
  assert.equal(text, 'modified Deployment default/web by deploys');
});

test('paths reach into the object, including list items and quoted keys', () => {
  const event = sampleEvent();
  assert.equal(renderTemplate('{{object.metadata.labels.app}}', event), 'web');
  assert.equal(renderTemplate('{{object.metadata.labels["app.kubernetes.io/name"]}}', event), 'shop');
  assert.equal(renderTemplate('{{object.spec.template.spec.containers[0].image}}', event), 'nginx:1.27');
  assert.equal(renderTemplate('{{object.spec.replicas}}', event), '3');
});

test('diff renders one formatted line per change and key renders namespace/name', () => {
  const event = sampleEvent({
    diff: [
      { path: 'spec.replicas', op: 'replace', old: 2, new: 3 },
      { path: 'metadata.labels.tier', op: 'add', new: 'front' },
    ],
  });
  assert.equal(
    renderTemplate('{{key}}:\n{{diff}}', event),
    'default/web:\nspec.replicas: 2 → 3\nmetadata.labels.tier: + "front"',
  );
});

test('unknown and malformed paths render empty', () => {
  const event = sampleEvent();
  assert.equal(
    renderTemplate('[{{nope}}][{{object.metadata.nothing.deeper}}][{{object..x}}][{{a[}}]', event),
    '[][][][]',
  );
});

test('prototype members and methods are not reachable, so nothing can be called', () => {
  const event = sampleEvent();
  assert.equal(renderTemplate('{{constructor}}{{name.length}}{{__proto__}}{{object.toString}}', event), '');
});

test('objects render as JSON and absent values as nothing', () => {
  const event = sampleEvent({ namespace: undefined });
  assert.equal(
    renderTemplate('{{object.metadata.labels}}|{{namespace}}', event),
    '{"app":"web","app.kubernetes.io/name":"shop"}|',
  );
});

test('an escape function applies to substituted values only, never to the template text', () => {
  const event = sampleEvent({ name: '<b>' });
  const escape = (v: string): string => v.replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  assert.equal(renderTemplate('<{{name}}>', event, { escape }), '<&lt;b&gt;>');
});

test('text without placeholders and stray braces pass through unchanged', () => {
  assert.equal(renderTemplate('plain {single} {{ }} text', sampleEvent()), 'plain {single} {{ }} text');
});

test('template paths parse into segments', () => {
  assert.deepEqual(parseTemplatePath('a.b[2]["c.d"]'), ['a', 'b', 2, 'c.d']);
  assert.equal(parseTemplatePath('.a'), undefined);
  assert.equal(parseTemplatePath('a b'), undefined);
});
