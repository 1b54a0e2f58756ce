import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blindSpots, summarize, watchedIntervals, type ReplicaLog } from '../../chaos/blind-spot.js';

const WATCHING = 'watching this replica’s parts of the hash space';

test('a sharded replica watches its parts from the sync of all its watchers until its next assignment or its end', () => {
  const log: ReplicaLog = {
    identity: 'r0',
    startedAt: 0,
    endedAt: 500,
    lines: [
      { msg: WATCHING, time: 10, parts: [0, 1] },
      { msg: 'synced', time: 20 },
      { msg: 'synced', time: 30 },
      { msg: WATCHING, time: 200, parts: [1] },
      { msg: 'synced', time: 210 },
      { msg: 'synced', time: 250 },
    ],
  };
  assert.deepEqual(watchedIntervals(log, 'sharded', 2), [
    { part: 0, from: 30, to: 200, identity: 'r0', exit: false },
    { part: 1, from: 30, to: 200, identity: 'r0', exit: false },
    { part: 1, from: 250, to: 500, identity: 'r0', exit: true },
  ]);
});

test('a part unwatched between a crash and its new owner’s sync is blamed on the crash, a moved part on the last fault', () => {
  const logs: ReplicaLog[] = [
    {
      identity: 'r0',
      startedAt: 0,
      lines: [
        { msg: WATCHING, time: 0, parts: [0] },
        { msg: 'synced', time: 5 },
        { msg: WATCHING, time: 7000, parts: [0, 1] },
        { msg: 'synced', time: 7400 },
      ],
    },
    {
      identity: 'r1',
      startedAt: 0,
      endedAt: 1000,
      lines: [
        { msg: WATCHING, time: 0, parts: [1] },
        { msg: 'synced', time: 5 },
      ],
    },
  ];
  const spots = blindSpots(logs, 'sharded', {
    watchers: 1,
    parts: 2,
    from: 100,
    to: 10_000,
    // A join made while r1 was already dead is not what left its part unwatched.
    faults: [
      { kind: 'SIGKILL', replica: 'r1', at: 1000 },
      { kind: 'join', at: 1500 },
    ],
  });
  assert.deepEqual(spots, [
    { part: 0, from: 7000, ms: 400, fault: 1 },
    { part: 1, from: 1000, ms: 6400, fault: 0 },
  ]);
});

test('under leader election the work is one part, watched while leading', () => {
  const logs: ReplicaLog[] = [
    {
      identity: 'r0',
      startedAt: 0,
      endedAt: 3000,
      lines: [
        { msg: 'started leading', time: 10 },
        { msg: 'synced', time: 50 },
      ],
    },
    {
      identity: 'r1',
      startedAt: 0,
      lines: [
        { msg: 'started leading', time: 9000 },
        { msg: 'synced', time: 9500 },
      ],
    },
  ];
  const spots = blindSpots(logs, 'failover', {
    watchers: 1,
    parts: 16,
    from: 100,
    to: 20_000,
    faults: [{ kind: 'SIGTERM', replica: 'r0', at: 2900 }],
  });
  assert.deepEqual(spots, [{ part: 0, from: 3000, ms: 6500, fault: 0 }]);
});

test('p50 and p99 are nearest-rank percentiles', () => {
  assert.deepEqual(summarize([5, 1, 3, 2, 4]), { n: 5, p50Ms: 3, p99Ms: 5, maxMs: 5 });
  assert.deepEqual(summarize([]), { n: 0, p50Ms: 0, p99Ms: 0, maxMs: 0 });
});
