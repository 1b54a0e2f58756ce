import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MinHeap } from '../../../src/queue/min-heap.js';

test('the heap gives items back smallest first whatever order they went in', () => {
  const heap = new MinHeap<number>((a, b) => a < b);
  const input = Array.from({ length: 200 }, (_, i) => (i * 7919) % 211);
  for (const n of input) heap.push(n);
  assert.equal(heap.size, 200);
  assert.equal(heap.peek(), Math.min(...input));
  const out: number[] = [];
  for (let n = heap.pop(); n !== undefined; n = heap.pop()) out.push(n);
  assert.deepEqual(
    out,
    [...input].sort((a, b) => a - b),
  );
  assert.equal(heap.size, 0);
});
