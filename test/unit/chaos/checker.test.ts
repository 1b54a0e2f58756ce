import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  check,
  expectedChanges,
  verdictLine,
  type Delivered,
  type Receipt,
  type WatcherScope,
} from '../../chaos/checker.js';
import type { Change } from '../../chaos/etcd-history.js';

const IN = { 'chaos/in': 'yes' };
const OUT = { 'chaos/in': 'no' };
const watchers: WatcherScope[] = [
  { name: 'all', namespaces: ['a'] },
  { name: 'selected', namespaces: ['a'], selector: { label: 'chaos/in', value: 'yes' } },
];

/** cm-1 lives (u1), moves out of the selector and back, is deleted; the name is made again (u2). */
const history: Change[] = [
  { uid: 'u1', namespace: 'a', name: 'cm-1', resourceVersion: '10', type: 'added', labels: IN },
  {
    uid: 'u1',
    namespace: 'a',
    name: 'cm-1',
    resourceVersion: '12',
    type: 'modified',
    labels: IN,
    previousLabels: IN,
  },
  {
    uid: 'u1',
    namespace: 'a',
    name: 'cm-1',
    resourceVersion: '13',
    type: 'modified',
    labels: OUT,
    previousLabels: IN,
  },
  {
    uid: 'u1',
    namespace: 'a',
    name: 'cm-1',
    resourceVersion: '14',
    type: 'modified',
    labels: IN,
    previousLabels: OUT,
  },
  { uid: 'u1', namespace: 'a', name: 'cm-1', resourceVersion: '15', type: 'deleted', labels: IN },
  { uid: 'u2', namespace: 'a', name: 'cm-1', resourceVersion: '16', type: 'added', labels: OUT },
  {
    uid: 'u2',
    namespace: 'a',
    name: 'cm-1',
    resourceVersion: '17',
    type: 'modified',
    labels: OUT,
    previousLabels: OUT,
  },
  // Another namespace: no watcher's.
  { uid: 'u9', namespace: 'b', name: 'cm-9', resourceVersion: '18', type: 'added', labels: IN },
];

/** What a perfect Raven delivers: each change once, live, in order, one id each. */
function perfect(): Receipt[] {
  return expectedChanges(watchers, history).map((e, i) => ({
    id: `${e.watcher}:${e.uid}:${e.resourceVersion}:${e.type}`,
    at: i,
    body: {
      type: e.type,
      watcher: e.watcher,
      uid: e.uid,
      namespace: e.namespace,
      name: e.name,
      resourceVersion: e.resourceVersion,
      origin: 'live',
    },
  }));
}

const run = (
  receipts: Receipt[],
  more: { writes?: Parameters<typeof check>[0]['writes']; compactions?: string[] } = {},
) =>
  check({
    watchers,
    history,
    writes: more.writes ?? [],
    receipts,
    ...(more.compactions === undefined ? {} : { compactions: more.compactions }),
  });

const gap = (id: string, body: Partial<Delivered>, at = 100): Receipt => ({
  id,
  at,
  body: { type: 'gap', watcher: 'all', reason: 'resume-expired', ...body },
});

test('a watcher with a label selector expects objects moving out as deleted and back in as added', () => {
  const selected = expectedChanges(watchers, history).filter((e) => e.watcher === 'selected');
  assert.deepEqual(
    selected.map((e) => `${e.uid}@${e.resourceVersion}:${e.type}`),
    ['u1@10:added', 'u1@12:modified', 'u1@13:deleted', 'u1@14:added', 'u1@15:deleted'],
  );
});

test('every change delivered once passes, and requests repeated under one id are only counted', () => {
  const receipts = perfect();
  const first = receipts[0];
  assert.ok(first);
  const report = run([...receipts, { ...first, at: 50 }]);
  assert.equal(report.verdict, 'PASS', verdictLine(report));
  assert.equal(report.counts.expected, 12);
  assert.equal(report.counts.repeats, 1);
  assert.match(verdictLine(report), /^PASS: 12 changes expected, 12 processed, 0 missing/);
});

test('a change never delivered is missing and fails the run', () => {
  // The deletion of u1, the first incarnation of a name made again: the known name-keyed loss.
  const receipts = perfect().filter(
    (r) => !(r.body.uid === 'u1' && r.body.type === 'deleted' && r.body.watcher === 'all'),
  );
  const report = run(receipts);
  assert.equal(report.verdict, 'FAIL');
  assert.equal(report.counts.missing, 1);
  assert.deepEqual(
    report.missing.map((f) => [f.watcher, f.uid, f.resourceVersion]),
    [['all', 'u1', '15']],
  );
});

test('one change processed under two ids is reported as delivered twice', () => {
  const receipts = perfect();
  const copy = receipts.find((r) => r.body.uid === 'u2' && r.body.resourceVersion === '17');
  assert.ok(copy);
  const report = run([...receipts, { ...copy, id: 'another-id', at: 99 }]);
  assert.equal(report.verdict, 'FAIL');
  assert.equal(report.counts.twice, 1);
  assert.deepEqual(report.twice[0]?.ids, [copy.id, 'another-id']);
});

test('an event for a change that never happened is a phantom', () => {
  const report = run([
    ...perfect(),
    {
      id: 'p',
      at: 99,
      body: { type: 'modified', watcher: 'all', uid: 'u1', resourceVersion: '11', origin: 'live' },
    },
    // A change in a namespace the watcher does not watch is a phantom for it too.
    {
      id: 'q',
      at: 99,
      body: { type: 'added', watcher: 'all', uid: 'u9', resourceVersion: '18', origin: 'live' },
    },
  ]);
  assert.equal(report.verdict, 'FAIL');
  assert.deepEqual(
    report.phantoms.map((f) => `${f.uid}@${f.resourceVersion}`),
    ['u1@11', 'u9@18'],
  );
});

test('a re-created object delivered as modified has the wrong type', () => {
  const receipts = perfect().map((r) =>
    r.body.uid === 'u2' && r.body.resourceVersion === '16'
      ? { ...r, body: { ...r.body, type: 'modified' as const } }
      : r,
  );
  const report = run(receipts);
  assert.equal(report.verdict, 'FAIL');
  assert.equal(report.counts.wrongType, 1);
  assert.match(report.wrongType[0]?.detail ?? '', /delivered as modified .* the change was added/);
});

test('an object whose changes are processed out of order is reported', () => {
  const receipts = perfect().map((r) =>
    r.body.watcher === 'all' && r.body.uid === 'u1' && r.body.resourceVersion === '10'
      ? { ...r, at: 1000 }
      : r,
  );
  const report = run(receipts);
  assert.equal(report.verdict, 'FAIL');
  assert.equal(report.counts.outOfOrder, 1);
});

test('changes skipped under a gap notice that covers them pass; the end state compared with a checkpoint may be typed by it', () => {
  // Raven was down from rv 10 to 15: u1's changes 12 to 14 were skipped; the deletion came as a tombstone.
  const receipts = perfect().filter(
    (r) => r.body.watcher !== 'all' || r.body.uid !== 'u1' || r.body.resourceVersion === '10',
  );
  receipts.push(
    {
      id: 'tomb',
      at: 60,
      body: {
        type: 'deleted',
        watcher: 'all',
        uid: 'u1',
        resourceVersion: '10',
        origin: 'restart',
        tombstone: true,
      },
    },
    gap('g1', { fromResourceVersion: '10', toResourceVersion: '15' }),
  );
  const report = run(receipts);
  assert.equal(report.verdict, 'PASS', verdictLine(report));
  assert.equal(report.counts.skippedWithNotice, 3);
  assert.equal(report.counts.gapNotices, 1);
});

test('a change skipped outside every gap notice is missing, and a notice of another namespace covers nothing', () => {
  const receipts = perfect().filter((r) => !(r.body.watcher === 'all' && r.body.resourceVersion === '12'));
  receipts.push(gap('g1', { fromResourceVersion: '12', toResourceVersion: '15' }));
  receipts.push(gap('g2', { namespace: 'b', fromResourceVersion: '11', toResourceVersion: '15' }));
  const report = run(receipts);
  assert.equal(report.verdict, 'FAIL');
  assert.equal(report.counts.missing, 1);
  // g1's window was written to (13 to 15) while the history was lost; b was not written to.
  assert.equal(report.counts.unverifiableGapNotices, 1);
  assert.equal(report.counts.needlessGapNotices, 1);
  assert.equal(report.needlessGapNotices[0]?.ids?.[0], 'g2');
});

test('a gap notice when nothing was skipped is a false alarm and fails the run', () => {
  const report = run([
    ...perfect(),
    // An overflow is Raven's own: it knows what it dropped.
    gap('g1', { reason: 'overflow', fromResourceVersion: '12', toResourceVersion: '17' }),
    // The history was lost, but nothing was written to its namespace in the window (18 is in b).
    gap('g2', { reason: 'resume-expired', fromResourceVersion: '17', toResourceVersion: '18' }),
  ]);
  assert.equal(report.verdict, 'FAIL');
  assert.equal(report.counts.needlessGapNotices, 2);
  assert.equal(report.counts.unverifiableGapNotices, 0);
  assert.match(
    report.needlessGapNotices[0]?.detail ?? '',
    /overflow, after 12 up to 17\) though no change in it was skipped/,
  );
});

test('a notice of lost history over a window etcd was compacted in is unverifiable, whatever was written; a compaction outside the window excuses nothing', () => {
  // Nothing was written to namespace a after 17; the revisions after it may be any kind's.
  const receipts = [
    ...perfect(),
    gap('g1', { reason: 'resume-expired', fromResourceVersion: '17', toResourceVersion: '19' }),
    gap('g2', { reason: 'relist', fromResourceVersion: '17', toResourceVersion: '18' }),
    // Raven's own decision: a compaction does not excuse an overflow notice.
    gap('g3', { reason: 'overflow', fromResourceVersion: '17', toResourceVersion: '19' }),
  ];
  const inside = run(receipts, { compactions: ['19'] });
  assert.equal(inside.counts.unverifiableGapNotices, 1);
  assert.match(inside.unverifiableGapNotices[0]?.detail ?? '', /etcd was compacted inside its window/);
  assert.deepEqual(
    inside.needlessGapNotices.map((f) => f.ids?.[0]),
    ['g2', 'g3'],
  );
  const before = run(receipts, { compactions: ['17', '12'] });
  assert.equal(before.counts.unverifiableGapNotices, 0);
  assert.equal(before.counts.needlessGapNotices, 3);
});

test('a notice of lost history over a window its namespaces were written in is unverifiable, not needless', () => {
  const report = run([
    ...perfect(),
    gap('g1', { reason: 'relist', fromResourceVersion: '12', toResourceVersion: '17' }),
    gap('g2', {
      watcher: 'selected',
      reason: 'resume-expired',
      fromResourceVersion: '15',
      toResourceVersion: '17',
    }),
  ]);
  assert.equal(report.verdict, 'PASS', verdictLine(report));
  assert.equal(report.counts.needlessGapNotices, 0);
  assert.equal(report.counts.unverifiableGapNotices, 2);
  assert.match(
    verdictLine(report),
    /2 gap notices \(0 needless, 2 unverifiable, 0 changes skipped with one\)/,
  );
});

test('a write the checker’s own history lacks makes the run inconclusive, never a pass', () => {
  const report = run(perfect(), {
    writes: [
      { type: 'added', uid: 'u1', resourceVersion: '10' },
      { type: 'deleted', uid: 'u1' },
      { type: 'modified', uid: 'u2', resourceVersion: '20' },
    ],
  });
  assert.equal(report.verdict, 'INCONCLUSIVE');
  assert.deepEqual(
    report.incompleteHistory.map((f) => `${f.uid}@${f.resourceVersion}`),
    ['u2@20'],
  );
});
