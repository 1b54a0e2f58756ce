import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attributedDiffEntries, changedByText } from '../../../src/raven/model/changed-by-text.js';
import { ATTRIBUTED_LINES, attributedEvent } from './sinks/fixtures.js';

test('each diff entry is followed by the managers its path is attributed to; others stay as they are', () => {
  const event = attributedEvent();
  assert.deepEqual(
    attributedDiffEntries(event.diff, event.changedBy),
    ATTRIBUTED_LINES.map((l) => [l]),
  );
});

test('without attribution the entries are the plain diff', () => {
  const event = attributedEvent();
  assert.deepEqual(attributedDiffEntries(event.diff, undefined), [
    ['spec.replicas: 2 → 3'],
    ['metadata.labels.tier: + "front"'],
    ['status.observedGeneration: 4 → 5'],
  ]);
});

test('a multi-line entry keeps its hunks under the attributed summary line', () => {
  const entries = attributedDiffEntries(
    [{ path: 'data.conf', op: 'replace', old: 'a\nb\n', new: 'a\nc\n' }],
    [{ manager: 'kubectl-edit', operation: 'Update', paths: ['data.conf'] }],
  );
  assert.deepEqual(entries, [
    [
      'data.conf: text changed (2 → 2 lines)  by kubectl-edit (Update)',
      '  @@ -1,2 +1,2 @@',
      '   a',
      '  -b',
      '  +c',
    ],
  ]);
});

test('several managers of one path are joined by commas', () => {
  const text = changedByText(
    [
      { manager: 'a', operation: 'Apply', time: '2026-11-28T10:42:07Z', paths: ['spec.replicas'] },
      { manager: 'b', operation: 'Update', time: '2026-11-28T10:42:09Z', paths: ['spec.replicas'] },
    ],
    'spec.replicas',
  );
  assert.equal(text, 'by a (Apply) at 10:42:07, b (Update) at 10:42:09');
});
