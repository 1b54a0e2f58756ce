import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenStackError } from '../../../src/errors/openstack-error.js';
import { PortBatcher, type BulkCollection } from '../../../src/translator/port-batcher.js';

/** A ports collection in memory whose calls are answered when the test says so. */
function collection(fail: (inputs: readonly string[]) => Error | undefined = () => undefined) {
  const calls: string[][] = [];
  const gates: (() => void)[] = [];
  const answer = async (inputs: readonly string[]): Promise<string[]> => {
    calls.push([...inputs]);
    await new Promise<void>((resolve) => gates.push(resolve));
    const error = fail(inputs);
    if (error !== undefined) throw error;
    return inputs.map((i) => `port-${i}`);
  };
  const ports: BulkCollection<string, string> = {
    create: async (input) => (await answer([input]))[0] ?? '',
    createMany: (inputs) => answer(inputs),
  };
  /** Answer every call in flight. */
  const release = async () => {
    await new Promise((r) => setImmediate(r));
    for (const open of gates.splice(0)) open();
    await new Promise((r) => setImmediate(r));
  };
  return { ports, calls, release };
}

test('a lone create goes at once; creates asked meanwhile go together in one bulk call', async () => {
  const { ports, calls, release } = collection();
  const batcher = new PortBatcher(ports);
  const first = batcher.create('a');
  const rest = ['b', 'c', 'd'].map((i) => batcher.create(i));
  assert.deepEqual(calls, [['a']], 'the first did not wait for company');
  await release();
  assert.equal(await first, 'port-a');
  assert.deepEqual(calls, [['a'], ['b', 'c', 'd']]);
  await release();
  assert.deepEqual(await Promise.all(rest), ['port-b', 'port-c', 'port-d']);
  assert.deepEqual(batcher.stats, { bulkCalls: 1, singleCalls: 1 });
});

test('a batch holds at most maxBatch ports', async () => {
  const { ports, calls, release } = collection();
  const batcher = new PortBatcher(ports, 2);
  const all = ['a', 'b', 'c', 'd', 'e'].map((i) => batcher.create(i));
  for (let i = 0; i < 4; i++) await release();
  assert.deepEqual(await Promise.all(all), ['port-a', 'port-b', 'port-c', 'port-d', 'port-e']);
  assert.deepEqual(calls, [['a'], ['b', 'c'], ['d', 'e']]);
});

test('a bulk create answered with an error is made again port by port: each error reaches its own caller', async () => {
  const refused = (inputs: readonly string[]) =>
    inputs.includes('bad')
      ? new OpenStackError({
          service: 'network',
          call: 'POST /v2.0/ports',
          status: 409,
          fault: { type: 'IpAddressAlreadyAllocated', message: 'taken' },
        })
      : undefined;
  const { ports, calls, release } = collection(refused);
  const batcher = new PortBatcher(ports);
  const first = batcher.create('a');
  const good = batcher.create('b');
  const bad = assert.rejects(batcher.create('bad'), /taken/);
  for (let i = 0; i < 3; i++) await release();
  assert.equal(await first, 'port-a');
  assert.equal(await good, 'port-b');
  await bad;
  assert.deepEqual(calls, [['a'], ['b', 'bad'], ['b'], ['bad']]);
});

test('a bulk create without an answer fails every caller (whether the ports exist is unknown)', async () => {
  const lost = (inputs: readonly string[]) =>
    inputs.length > 1
      ? new OpenStackError({ service: 'network', call: 'POST /v2.0/ports', fault: { message: 'timed out' } })
      : undefined;
  const { ports, calls, release } = collection(lost);
  const batcher = new PortBatcher(ports);
  const first = batcher.create('a');
  const others = [batcher.create('b'), batcher.create('c')].map((o) => assert.rejects(o, /no answer/));
  for (let i = 0; i < 2; i++) await release();
  assert.equal(await first, 'port-a');
  await Promise.all(others);
  assert.deepEqual(calls, [['a'], ['b', 'c']], 'not created again one by one');
});
