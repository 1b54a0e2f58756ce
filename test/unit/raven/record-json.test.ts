import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gapNotice } from '../../../src/raven/model/gap-notice.js';
import {
  keepServerJson,
  OBJECT_BYTES_BUDGET,
  recordJson,
  recordLine,
  SERVER_JSON_BUDGET,
  serialisedObject,
} from '../../../src/raven/model/record-json.js';
import { changeEvent, countedPod, pod, PODS, TIME } from './checkpoint/fixtures.js';

test('a record of objects with no server bytes is written exactly as JSON.stringify writes it', () => {
  const previous = pod('d', 'a', { rv: '4', image: 'nginx:1.24' });
  const modified = {
    ...changeEvent('modified', pod('d', 'a', { rv: '5', image: 'nginx:1.25 "é" ☕' })),
    previous,
    diff: [{ path: 'spec.containers[name=main].image', op: 'replace' as const, old: 'nginx:1.24', new: 'x' }],
  };
  const clusterScoped = changeEvent('added', pod(undefined, 'n'));
  const withOccurrence = {
    ...changeEvent('added', pod('d', 'e')),
    occurrence: { reason: 'BackOff', count: 3 } as unknown as NonNullable<typeof modified.occurrence>,
  };
  const gap = gapNotice({
    watcher: 'pods',
    resource: PODS,
    namespace: undefined,
    reason: 'relist',
    fromResourceVersion: '1',
    toResourceVersion: '9',
    since: undefined,
    time: TIME,
  });
  for (const record of [modified, clusterScoped, withOccurrence, gap])
    assert.equal(recordJson(record), JSON.stringify(record));
});

test('a record is serialised once for every sink, and its object is kept for the checkpoint', () => {
  const { object, reads } = countedPod('a', '5');
  const event = changeEvent('added', object);
  assert.equal(serialisedObject(event), undefined, 'nothing is made before a sink asks');
  const first = recordJson(event);
  assert.equal(recordJson(event), first);
  assert.equal(reads(), 1);
  assert.equal(
    Buffer.from(serialisedObject(event) ?? []).toString(),
    JSON.stringify(pod('d', 'a', { rv: '5' })),
  );
  assert.equal(reads(), 1);
});

test("an object's bytes are reused as the previous state of its next change, within a bounded memory", () => {
  const { object, reads } = countedPod('a', '5');
  recordLine(changeEvent('added', object));
  assert.equal(reads(), 1);
  const next = { ...changeEvent('modified', pod('d', 'a', { rv: '6' })), previous: object };
  assert.equal(recordJson(next), JSON.stringify(next));
  assert.equal(reads(), 2, 'read once more by JSON.stringify in this test, not by the record');
  // Past the budget, an object's bytes are made again: the memory they take is bounded.
  const filler = { ...pod('d', 'f'), data: 'x'.repeat(64 * 1024) };
  for (let made = 0; made <= OBJECT_BYTES_BUDGET; made += 64 * 1024)
    recordLine(changeEvent('added', { ...filler }));
  recordLine({ ...changeEvent('modified', pod('d', 'a', { rv: '7' })), previous: object });
  assert.equal(reads(), 3);
});

test('the line of a record is its JSON and a newline as UTF-8, encoded once, and the object bytes are a view into it', () => {
  for (const image of ['nginx:1.25', 'nginx:1.25 "é" ☕ 𝄞']) {
    const event = {
      ...changeEvent('modified', pod('d', 'a', { rv: '5', image })),
      previous: pod('d', 'a', { rv: '4', image: `${image}-é` }),
    };
    const line = recordLine(event);
    assert.equal(line.toString('utf8'), `${JSON.stringify(event)}\n`);
    assert.equal(recordLine(event), line, 'the same Buffer for every sink');
    const object = serialisedObject(event);
    assert.ok(object instanceof Uint8Array);
    assert.equal(object.buffer, line.buffer, 'a view, not a copy');
    assert.equal(Buffer.from(object).toString('utf8'), JSON.stringify(event.object));
  }
  const gap = gapNotice({
    watcher: 'pods',
    resource: PODS,
    namespace: 'ü',
    reason: 'relist',
    fromResourceVersion: '1',
    toResourceVersion: '9',
    since: undefined,
    time: TIME,
  });
  assert.equal(recordLine(gap).toString('utf8'), `${JSON.stringify(gap)}\n`);
});

test("a record's object is written as the bytes the server sent, once, and kept for its next change", () => {
  const object = pod('d', 'a', { rv: '5', image: 'nginx:1.25 <b> & é' });
  // The apiserver's bytes for that object: the same value, `<`, `>` and `&` escaped.
  const server = Buffer.from(
    JSON.stringify(object).replace('<', '\\u003c').replace('>', '\\u003e').replace('&', '\\u0026'),
  );
  keepServerJson(object, server);
  const event = changeEvent('added', object);
  const line = recordLine(event);
  assert.ok(line.includes(server), "the server's bytes, as they came");
  assert.deepEqual(
    JSON.parse(line.toString('utf8')),
    JSON.parse(JSON.stringify(event)),
    'the same JSON value',
  );
  assert.deepEqual(serialisedObject(event), server, 'the checkpoint stores those bytes');
  // As the next change's previous state, the same bytes are taken from the line.
  const next = { ...changeEvent('modified', pod('d', 'a', { rv: '6' })), previous: object };
  assert.ok(recordLine(next).includes(server));
  // Taken by the first record: a second record of the same object is serialised.
  const again = changeEvent('modified', object);
  assert.equal(recordJson(again), JSON.stringify(again));
});

test("a server's bytes not taken are dropped past their budget, and the object is serialised", () => {
  const object = pod('d', 'b', { rv: '5' });
  keepServerJson(object, Buffer.from(JSON.stringify(object).replace('"b"', '"\\u0062"')));
  const filler = Buffer.alloc(64 * 1024, 0x20);
  for (let kept = 0; kept <= SERVER_JSON_BUDGET; kept += filler.length) keepServerJson(pod('d', 'f'), filler);
  const event = changeEvent('added', object);
  assert.equal(recordJson(event), JSON.stringify(event));
});
