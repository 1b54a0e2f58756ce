import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeliveryWatermark, type Mark } from '../../../src/raven/delivery/delivery-watermark.js';

/**
 * A script for one watermark: `+scope:rv>sinks` adds a change (rv `-` for a relist result, no
 * sinks for one routed nowhere), `^scope:rv` a bookmark, `ok:sink@n` settles the n-th change (from
 * 1) for a sink. Returns the watermark after each step.
 */
function run(scopes: string[], steps: string[], start?: string): (string | undefined)[] {
  const watermark = new DeliveryWatermark(scopes, start === undefined ? {} : { start });
  const marks: Mark[] = [];
  return steps.map((step) => {
    if (step.startsWith('+')) {
      const [where, sinks = ''] = step.slice(1).split('>');
      const [scope = '', rv = ''] = (where ?? '').split(':');
      marks.push(watermark.add(scope, rv === '-' ? undefined : rv, sinks === '' ? [] : sinks.split(',')));
    } else if (step.startsWith('^')) {
      const [scope = '', rv = ''] = step.slice(1).split(':');
      watermark.reached(scope, rv);
    } else {
      const [sink = '', n = ''] = step.slice(3).split('@');
      const mark = marks[Number(n) - 1];
      assert.ok(mark, `no change #${n}`);
      watermark.settle(mark, sink);
    }
    return watermark.resourceVersion;
  });
}

test('the watermark is the newest change that it and every earlier change are settled by every sink', () => {
  assert.deepEqual(
    run(
      ['*'],
      ['+*:10>a,b', '+*:11>a,b', '+*:12>a,b', 'ok:a@2', 'ok:b@2', 'ok:a@1', 'ok:b@1', 'ok:b@3', 'ok:a@3'],
      '9',
    ),
    ['9', '9', '9', '9', '9', '9', '11', '11', '12'],
  );
});

test('a change routed to no sink, and one every sink filtered silently, move the watermark like any other', () => {
  assert.deepEqual(run(['*'], ['+*:10>', '+*:11>a', 'ok:a@2', '+*:12>'], '9'), ['10', '10', '11', '12']);
});

test('a bookmark moves the watermark only when nothing before it is still in flight', () => {
  assert.deepEqual(run(['*'], ['^*:20', '+*:21>a', '^*:25', '^*:30', 'ok:a@1', '^*:31'], '9'), [
    '20',
    '20',
    '20',
    '20',
    '30',
    '31',
  ]);
});

test('a relist holds the watermark until its results are settled, then jumps to its resourceVersion', () => {
  // Relist results carry no resourceVersion of their own: 900 and 50 are objects' versions, in no order.
  assert.deepEqual(run(['*'], ['+*:->a', '+*:->a', '^*:1000', 'ok:a@2', 'ok:a@1'], '500'), [
    '500',
    '500',
    '500',
    '500',
    '1000',
  ]);
});

test('with several namespaces the watermark is the oldest scope: a quiet namespace holds it until a bookmark', () => {
  assert.deepEqual(
    run(
      ['shop', 'billing'],
      ['+shop:10>a', 'ok:a@1', '+shop:14>a', 'ok:a@2', '^billing:12', '^billing:20'],
      '5',
    ),
    ['5', '5', '5', '5', '12', '14'],
  );
});

test('a scope that has not listed yet keeps the watermark unknown', () => {
  assert.deepEqual(run(['shop', 'billing'], ['^shop:10', '^billing:8', '^billing:11']), [
    undefined,
    '8',
    '10',
  ]);
});

test('a resync covers what an overflowed sink dropped: earlier changes stop waiting for it', () => {
  const watermark = new DeliveryWatermark(['*'], { start: '1' });
  const dropped = [watermark.add('*', '2', ['a', 'b']), watermark.add('*', '3', ['a', 'b'])];
  for (const mark of dropped) watermark.settle(mark, 'b');
  const resyncPoint = watermark.lastSeq;
  const later = watermark.add('*', '4', ['a', 'b']);
  watermark.settle(later, 'b');
  assert.equal(watermark.resourceVersion, '1', 'sink a never settles what it dropped');
  watermark.coveredUpTo('a', resyncPoint);
  assert.equal(watermark.resourceVersion, '3', 'the resync covered changes up to its point, not after');
  watermark.settle(later, 'a');
  assert.equal(watermark.resourceVersion, '4');
});

test('settling twice or by a sink not waited for changes nothing, and onAdvance fires once per move', () => {
  const moves: string[] = [];
  const watermark = new DeliveryWatermark(['*'], { start: '1', onAdvance: (rv) => moves.push(rv) });
  const mark = watermark.add('*', '2', ['a', 'b']);
  watermark.settle(mark, 'a');
  watermark.settle(mark, 'a');
  watermark.settle(mark, 'c');
  assert.equal(watermark.resourceVersion, '1');
  watermark.settle(mark, 'b');
  watermark.reached('*', '2');
  watermark.reached('*', '3');
  assert.deepEqual(moves, ['2', '3']);
  assert.equal(watermark.pending, 0);
});

test('a long backlog settled in order leaves nothing behind', () => {
  const watermark = new DeliveryWatermark(['*'], { start: '0' });
  const marks = Array.from({ length: 5000 }, (_, i) => watermark.add('*', String(i + 1), ['a']));
  assert.equal(watermark.pending, 5000);
  for (const mark of marks.slice(0, 3000)) watermark.settle(mark, 'a');
  assert.equal(watermark.resourceVersion, '3000');
  assert.equal(watermark.pending, 2000);
  for (const mark of marks.slice(3000)) watermark.settle(mark, 'a');
  assert.equal(watermark.resourceVersion, '5000');
  assert.equal(watermark.pending, 0);
});

test('a sink that drops changes holds the watermark at the first one until a resync covers them', () => {
  const watermark = new DeliveryWatermark(['*'], { start: '1' });
  const kept = watermark.add('*', '2', ['a', 'b']);
  watermark.settle(kept, 'a');
  watermark.settle(kept, 'b');
  const first = watermark.add('*', '3', ['a', 'b']);
  watermark.settle(first, 'a');
  watermark.dropped(first, 'b');
  const later = watermark.add('*', '4', ['a', 'b']);
  watermark.settle(later, 'a');
  watermark.dropped(later, 'b');
  assert.equal(watermark.resourceVersion, '2', 'held before the first dropped change');
  const resyncPoint = watermark.lastSeq;
  const after = watermark.add('*', '5', ['a', 'b']);
  watermark.settle(after, 'a');
  watermark.dropped(after, 'b');
  watermark.coveredUpTo('b', resyncPoint);
  assert.equal(watermark.resourceVersion, '4', 'covered up to the resync point; 5 was dropped after it');
  watermark.coveredUpTo('b', watermark.lastSeq);
  assert.equal(watermark.resourceVersion, '5');
});

test('during a long outage of one sink the queue stays bounded: one barrier, settled marks merged', () => {
  const watermark = new DeliveryWatermark(['*'], { start: '0' });
  let rv = 0;
  for (let i = 0; i < 100_000; i++) {
    const mark = watermark.add('*', String(++rv), ['up', 'down']);
    watermark.settle(mark, 'up');
    watermark.dropped(mark, 'down');
  }
  assert.equal(watermark.resourceVersion, '0');
  assert.ok(watermark.pending < 5000, `${watermark.pending} marks held for 100 000 changes`);
  watermark.coveredUpTo('down', watermark.lastSeq);
  assert.equal(watermark.resourceVersion, '100000');
  assert.equal(watermark.pending, 0);
});
