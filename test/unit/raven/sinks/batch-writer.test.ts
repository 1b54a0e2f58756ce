import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchWriter } from '../../../../src/raven/sinks/batch-writer.js';

/** A write that records each batch and settles only when told. */
function controlledWrite(): {
  batches: number[][];
  inFlightMax: () => number;
  write: (items: number[]) => Promise<void>;
  finish: (err?: Error) => void;
} {
  const batches: number[][] = [];
  const pending: { resolve: () => void; reject: (e: Error) => void }[] = [];
  let inFlight = 0;
  let max = 0;
  return {
    batches,
    inFlightMax: () => max,
    write: (items) => {
      batches.push(items);
      inFlight++;
      max = Math.max(max, inFlight);
      return new Promise<void>((resolve, reject) => pending.push({ resolve, reject })).finally(
        () => inFlight--,
      );
    },
    finish: (err) => {
      const next = pending.shift();
      if (err === undefined) next?.resolve();
      else next?.reject(err);
    },
  };
}

const signal = new AbortController().signal;
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

test('deliveries submitted in one turn share one write', async () => {
  const w = controlledWrite();
  const writer = new BatchWriter(w.write, { maxBatch: 100, maxInFlight: 1 });
  const done = [1, 2, 3].map((n) => writer.submit(n, signal));
  await settle();
  assert.deepEqual(w.batches, [[1, 2, 3]]);
  w.finish();
  await Promise.all(done);
});

test('deliveries arriving while a write is in flight wait and go together in the next', async () => {
  const w = controlledWrite();
  const writer = new BatchWriter(w.write, { maxBatch: 100, maxInFlight: 1 });
  const first = writer.submit(1, signal);
  await settle();
  const later = [2, 3, 4].map((n) => writer.submit(n, signal));
  await settle();
  assert.deepEqual(w.batches, [[1]]);
  w.finish();
  await first;
  await settle();
  assert.deepEqual(w.batches, [[1], [2, 3, 4]]);
  w.finish();
  await Promise.all(later);
});

test('a batch holds at most maxBatch items and at most maxInFlight writes run at once', async () => {
  const w = controlledWrite();
  const writer = new BatchWriter(w.write, { maxBatch: 2, maxInFlight: 2 });
  const done = [1, 2, 3, 4, 5].map((n) => writer.submit(n, signal));
  await settle();
  assert.deepEqual(w.batches, [
    [1, 2],
    [3, 4],
  ]);
  w.finish();
  await settle();
  assert.deepEqual(w.batches.at(-1), [5]);
  w.finish();
  w.finish();
  await Promise.all(done);
  assert.equal(w.inFlightMax(), 2);
});

test('a failed write rejects every delivery of its batch with its error', async () => {
  const w = controlledWrite();
  const writer = new BatchWriter(w.write, { maxBatch: 10, maxInFlight: 1 });
  const done = [1, 2].map((n) => assert.rejects(writer.submit(n, signal), /server gone/));
  await settle();
  w.finish(new Error('server gone'));
  await Promise.all(done);
});

test('an aborted delivery is rejected without being written', async () => {
  const w = controlledWrite();
  const writer = new BatchWriter(w.write, { maxBatch: 10, maxInFlight: 1 });
  const controller = new AbortController();
  const kept = writer.submit(1, signal);
  const dropped = assert.rejects(writer.submit(2, controller.signal), /shutting down/);
  controller.abort(new Error('shutting down'));
  await settle();
  assert.deepEqual(w.batches, [[1]]);
  await dropped;
  w.finish();
  await kept;
});
