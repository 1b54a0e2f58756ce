import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateSchedule, MODES, type Op } from '../../chaos/schedule.js';

test('one seed gives the same schedule every time, and another seed a different one', () => {
  const a = generateSchedule({ seed: 1234, mode: 'sharded', durationS: 120 });
  assert.deepEqual(generateSchedule({ seed: 1234, mode: 'sharded', durationS: 120 }), a);
  assert.notDeepEqual(generateSchedule({ seed: 1235, mode: 'sharded', durationS: 120 }).ops, a.ops);
});

test('every operation is valid for what exists when it is made', () => {
  for (const mode of MODES)
    for (let seed = 1; seed <= 20; seed++) {
      const { ops, namespaces } = generateSchedule({ seed, mode, durationS: 90 });
      const live = new Map(namespaces.map((ns) => [ns, new Set<string>()]));
      for (const { item } of ops) {
        const names = live.get(item.kind === 'recreate-namespace' ? item.ns : item.ns) ?? new Set<string>();
        const what = `seed ${seed}: ${JSON.stringify(item)}`;
        const op: Op = item;
        switch (op.kind) {
          case 'create':
            assert.ok(!names.has(op.name), what);
            names.add(op.name);
            break;
          case 'delete':
            assert.ok(names.delete(op.name), what);
            break;
          case 'update-data':
          case 'update-labels':
          case 'recreate':
            assert.ok(names.has(op.name), what);
            break;
          case 'recreate-namespace':
            names.clear();
            break;
        }
      }
    }
});

test('a run has every kind of operation, faults in each lane, and at most 4 replicas at once', () => {
  const kinds = new Set<string>();
  const faults = new Set<string>();
  for (let seed = 1; seed <= 10; seed++) {
    const s = generateSchedule({ seed, mode: 'sharded', durationS: 120 });
    for (const { item } of s.ops)
      kinds.add(item.kind === 'update-data' && 'bytes' in item && item.bytes > 100_000 ? 'big' : item.kind);
    let running = s.initialReplicas.length;
    for (const { item } of s.faults) {
      faults.add(item.kind);
      if (item.kind === 'join') running++;
      if (item.kind === 'stop' && !item.rejoin) running--;
      assert.ok(running >= 1 && running <= 4, `seed ${seed}: ${running} replicas`);
    }
  }
  assert.deepEqual([...kinds].sort(), [
    'big',
    'create',
    'delete',
    'recreate',
    'recreate-namespace',
    'update-data',
    'update-labels',
  ]);
  for (const kind of ['stop', 'join', 'receiver-down', 'apiserver-restart', 'compaction', 'stall'])
    assert.ok(faults.has(kind), kind);
});

test('the only replica of a single run always comes back, and excluded faults are left out', () => {
  for (let seed = 1; seed <= 20; seed++) {
    const s = generateSchedule({
      seed,
      mode: 'single',
      durationS: 120,
      exclude: ['stall', 'postgres-restart'],
    });
    for (const { item } of s.faults) {
      assert.notEqual(item.kind, 'join');
      assert.ok(item.kind !== 'stall' && item.kind !== 'postgres-restart');
      if (item.kind === 'stop') assert.equal(item.rejoin, true);
    }
  }
});
