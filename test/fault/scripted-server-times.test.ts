/**
 * The scripted server's repeated steps (`times`) and request timestamps, which the watcher fault
 * tests use for clients that retry an unbounded number of times.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from 'undici';
import { ScriptedServer, type Scenario } from './scripted-server.js';

async function withScenario(
  scenario: Scenario,
  fn: (server: ScriptedServer, get: (path: string) => Promise<number>) => Promise<void>,
): Promise<void> {
  const server = await ScriptedServer.start(scenario);
  const client = new Client(server.url);
  const get = async (path: string): Promise<number> => {
    const res = await client.request({ method: 'GET', path });
    await res.body.text();
    return res.statusCode;
  };
  try {
    await fn(server, get);
  } finally {
    await server.close();
    await client.destroy();
  }
}

test('a step with times answers that many requests in a row before the script moves on', async () => {
  await withScenario(
    {
      name: 'twice then once',
      steps: [
        { expect: { path: '/a' }, respond: { status: 503 }, times: 2 },
        { expect: { path: '/b' }, respond: { status: 204 } },
      ],
    },
    async (server, get) => {
      assert.equal(await get('/a'), 503);
      assert.equal(await get('/a'), 503);
      assert.equal(await get('/b'), 204);
      server.assertDone();
      assert.deepEqual(
        server.requests.map((r) => r.step),
        [0, 0, 1],
      );
      const times = server.requests.map((r) => r.at);
      assert.deepEqual(
        [...times].sort((x, y) => x - y),
        times,
        'arrival times in order',
      );
    },
  );
});

test('a step with times left partly played fails assertDone with how many it answered', async () => {
  await withScenario(
    { name: 'short', steps: [{ name: 'retry', expect: { path: '/a' }, respond: {}, times: 3 }] },
    async (server, get) => {
      await get('/a');
      assert.throws(() => server.assertDone(), /step 1 \(retry\) answered 1 of 3 requests/);
    },
  );
});

test('a step with times Infinity answers every later request and is done once it answered one', async () => {
  await withScenario(
    {
      name: 'forever',
      steps: [
        { expect: { path: '/list' }, respond: {} },
        { name: 'retry', expect: { path: '/watch' }, respond: { status: 500 }, times: Infinity },
      ],
    },
    async (server, get) => {
      await get('/list');
      assert.throws(() => server.assertDone(), /1 step\(s\) never requested: step 2 \(retry\)/);
      for (let i = 0; i < 5; i++) assert.equal(await get('/watch'), 500);
      server.assertDone();
      assert.equal(await get('/other'), 500, 'a request that does not match is still reported');
      assert.throws(() => server.assertDone(), /step 2 \(retry\) got GET \/other: expected path \/watch/);
    },
  );
});
