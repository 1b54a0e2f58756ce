import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventHeadline, fitLines, truncateText } from '../../../../src/raven/sinks/event-summary.js';
import { sampleEvent } from './fixtures.js';

test('the headline names the change type, kind and namespace/name', () => {
  assert.equal(eventHeadline(sampleEvent()), 'modified Deployment default/web');
  assert.equal(
    eventHeadline(sampleEvent({ namespace: undefined, name: 'node-1' })),
    'modified Deployment node-1',
  );
});

test('an inferred deletion says how it was learned', () => {
  const event = sampleEvent({ type: 'deleted', tombstone: true, origin: 'relist', diff: [] });
  assert.equal(eventHeadline(event), 'deleted Deployment default/web (inferred after a relist)');
});

test('lines beyond the limit are replaced by a count of what was left out', () => {
  assert.deepEqual(fitLines(['a', 'b', 'c', 'd'], { maxLines: 2, maxChars: 1000 }), [
    'a',
    'b',
    '… and 2 more',
  ]);
  assert.deepEqual(fitLines(['a', 'b'], { maxLines: 2, maxChars: 1000 }), ['a', 'b']);
});

test('the character budget is kept, trailer included', () => {
  const lines = Array.from({ length: 50 }, (_, i) => `line ${i} ${'x'.repeat(30)}`);
  const fitted = fitLines(lines, { maxLines: 100, maxChars: 300 });
  assert.ok(fitted.join('\n').length <= 300);
  assert.match(fitted.at(-1) ?? '', /^… and \d+ more$/);
  const shown = fitted.length - 1;
  assert.equal(fitted.at(-1), `… and ${50 - shown} more`);
});

test('a single line longer than the budget is cut rather than dropped', () => {
  const fitted = fitLines(['y'.repeat(500), 'z'], { maxLines: 10, maxChars: 100 });
  assert.equal(fitted.length, 2);
  assert.ok((fitted[0] ?? '').endsWith('…'));
  assert.equal(fitted[1], '… and 1 more');
  assert.ok(fitted.join('\n').length <= 100);
});

test('text is cut with an ellipsis only when too long', () => {
  assert.equal(truncateText('abc', 3), 'abc');
  assert.equal(truncateText('abcd', 3), 'ab…');
});
