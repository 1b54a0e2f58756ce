import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from 'undici';
import { ScriptedServer, type Scenario } from './scripted-server.js';

/** Run `fn` against a started scenario with a fresh client, always tearing both down. */
async function withScenario(
  scenario: Scenario,
  fn: (server: ScriptedServer, client: Client) => Promise<void>,
): Promise<void> {
  const server = await ScriptedServer.start(scenario);
  const client = new Client(server.url);
  try {
    await fn(server, client);
  } finally {
    await server.close();
    await client.destroy();
  }
}

async function text(body: AsyncIterable<Uint8Array>): Promise<string> {
  let out = '';
  for await (const chunk of body) out += Buffer.from(chunk).toString('utf8');
  return out;
}

test('plays the steps in order, checks each query and records every request', async () => {
  await withScenario(
    {
      name: 'list then watch',
      steps: [
        {
          name: 'list',
          expect: {
            path: '/api/v1/pods',
            query: { equals: { limit: '500' }, absent: ['continue'], only: true },
          },
          respond: { body: ['{"kind":"PodList",', '"items":[]}'] },
        },
        {
          name: 'watch',
          expect: { path: '/api/v1/pods', query: { equals: { watch: '1' }, present: ['resourceVersion'] } },
          respond: {
            headers: { 'x-scenario': 'yes' },
            body: ['{"type":"BOOKMARK"', { delayMs: 5 }, { delayMs: 1, data: '}\n' }],
          },
        },
      ],
    },
    async (server, client) => {
      const list = await client.request({ method: 'GET', path: '/api/v1/pods?limit=500' });
      assert.equal(list.statusCode, 200);
      assert.equal(list.headers['content-type'], 'application/json');
      assert.equal(await text(list.body), '{"kind":"PodList","items":[]}');
      const watch = await client.request({ method: 'GET', path: '/api/v1/pods?watch=1&resourceVersion=7' });
      assert.equal(watch.headers['x-scenario'], 'yes');
      assert.equal(await text(watch.body), '{"type":"BOOKMARK"}\n');
      server.assertDone();
      assert.deepEqual(
        server.requests.map(({ method, path, query, step }) => ({ method, path, query, step })),
        [
          { method: 'GET', path: '/api/v1/pods', query: { limit: '500' }, step: 0 },
          { method: 'GET', path: '/api/v1/pods', query: { watch: '1', resourceVersion: '7' }, step: 1 },
        ],
      );
    },
  );
});

test('a reset step delivers its chunks and then tears the connection down mid-body', async () => {
  await withScenario(
    {
      name: 'reset',
      steps: [{ expect: { path: '/w' }, respond: { body: ['{"a":1}\n', '{"b":'], then: 'reset' } }],
    },
    async (server, client) => {
      const res = await client.request({ method: 'GET', path: '/w' });
      let received = '';
      await assert.rejects(async () => {
        for await (const chunk of res.body) received += Buffer.from(chunk as Uint8Array).toString('utf8');
      });
      assert.equal(received, '{"a":1}\n{"b":');
      server.assertDone();
    },
  );
});

test('a stall step keeps the stream open and silent until the server is closed', async () => {
  const server = await ScriptedServer.start({
    name: 'half-open',
    steps: [{ expect: { path: '/w' }, respond: { body: ['{"a":1}\n'], then: 'stall' } }],
  });
  const client = new Client(server.url);
  try {
    const res = await client.request({ method: 'GET', path: '/w' });
    const reader = res.body[Symbol.asyncIterator]();
    const first = (await reader.next()) as IteratorResult<Uint8Array>;
    assert.equal(Buffer.from(first.value).toString('utf8'), '{"a":1}\n');
    const rest = reader.next();
    server.assertDone();
    await server.close();
    await assert.rejects(rest);
  } finally {
    await server.close();
    await client.destroy();
  }
});

test('a chunk with a condition is sent only once the condition holds, and close() releases a stream waiting on one', async () => {
  let release = (): void => undefined;
  const released = new Promise<void>((r) => (release = r));
  const server = await ScriptedServer.start({
    name: 'condition',
    steps: [
      {
        expect: { path: '/w' },
        respond: { body: ['{"a":1}\n', { until: () => released, data: '{"b":2}\n' }] },
      },
      {
        expect: { path: '/w' },
        respond: { body: ['{"c":3}\n', { until: () => new Promise(() => undefined) }] },
      },
    ],
  });
  const client = new Client(server.url);
  try {
    const res = await client.request({ method: 'GET', path: '/w' });
    const reader = res.body[Symbol.asyncIterator]();
    const first = (await reader.next()) as IteratorResult<Uint8Array>;
    assert.equal(Buffer.from(first.value).toString('utf8'), '{"a":1}\n');
    // The next read is pending while the server waits on the condition, not on a timer: give a
    // misbehaving server a moment to send early (this wait cannot fail a correct one).
    let isReleased = false;
    const second = reader.next().then((next) => ({ next, isReleased }));
    await new Promise((r) => setTimeout(r, 100));
    isReleased = true;
    release();
    const { next, isReleased: afterRelease } = await second;
    assert.equal(afterRelease, true, 'the chunk was sent before its condition held');
    let rest = Buffer.from(next.value as Uint8Array).toString('utf8');
    for (let more = await reader.next(); more.done !== true; more = await reader.next())
      rest += Buffer.from(more.value as Uint8Array).toString('utf8');
    assert.equal(rest, '{"b":2}\n');

    const never = await client.request({ method: 'GET', path: '/w' });
    const held = never.body[Symbol.asyncIterator]();
    assert.equal(
      Buffer.from(((await held.next()) as IteratorResult<Uint8Array>).value).toString('utf8'),
      '{"c":3}\n',
    );
    const pending = held.next();
    server.assertDone();
    await server.close();
    await assert.rejects(pending);
  } finally {
    await server.close();
    await client.destroy();
  }
});

test('a hang step never sends headers, and close() releases the waiting client', async () => {
  const server = await ScriptedServer.start({
    name: 'hang',
    steps: [{ expect: { path: '/w' }, respond: 'hang' }],
  });
  const client = new Client(server.url);
  try {
    const pending = client.request({ method: 'GET', path: '/w' });
    await server.waitForRequests(1);
    server.assertDone();
    await server.close();
    await assert.rejects(pending);
  } finally {
    await client.destroy();
  }
});

test('a request that does not match its step is answered 500 with the reason and fails assertDone', async () => {
  await withScenario(
    {
      name: 'strict',
      steps: [{ name: 'watch', expect: { path: '/w', query: { equals: { watch: '1' } } }, respond: {} }],
    },
    async (server, client) => {
      const res = await client.request({ method: 'GET', path: '/w?watch=true' });
      assert.equal(res.statusCode, 500);
      assert.match(
        await text(res.body),
        /step 1 \(watch\) got GET \/w\?watch=true: expected query watch=1, got watch=true/,
      );
      assert.throws(
        () => server.assertDone(),
        /scenario "strict" did not play as scripted:\n- step 1 \(watch\) got GET \/w\?watch=true: expected query watch=1, got watch=true\n- 1 step\(s\) never requested: step 1 \(watch\)/,
      );
    },
  );
});

const queryCases: [string, Scenario['steps'][number]['expect'], string, RegExp][] = [
  ['a wrong method', { method: 'POST', path: '/w' }, '/w', /expected method POST/],
  ['a wrong path', { path: '/w' }, '/x', /expected path \/w/],
  [
    'a missing parameter',
    { path: '/w', query: { present: ['resourceVersion'] } },
    '/w',
    /expected query parameter resourceVersion/,
  ],
  [
    'a parameter that must be absent',
    { path: '/w', query: { absent: ['continue'] } },
    '/w?continue=abc',
    /expected no query parameter continue, got continue=abc/,
  ],
  [
    'an extra parameter with only',
    { path: '/w', query: { equals: { watch: '1' }, only: true } },
    '/w?watch=1&x=2',
    /unexpected query parameter\(s\) x/,
  ],
  [
    'a failed custom check',
    {
      path: '/w',
      query: { check: (q) => (q.get('timeoutSeconds') === null ? 'expected a timeout' : undefined) },
    },
    '/w',
    /expected a timeout/,
  ],
];

for (const [what, expect, path, message] of queryCases) {
  test(`a request with ${what} is reported by assertDone`, async () => {
    await withScenario({ name: what, steps: [{ expect, respond: {} }] }, async (server, client) => {
      const res = await client.request({ method: 'GET', path });
      await text(res.body);
      assert.equal(res.statusCode, 500);
      assert.throws(() => server.assertDone(), message);
    });
  });
}

test('steps that were never requested fail assertDone', async () => {
  await withScenario(
    {
      name: 'unfinished',
      steps: [
        { expect: { path: '/a' }, respond: {} },
        { name: 'second', expect: { path: '/b' }, respond: {} },
      ],
    },
    async (server, client) => {
      await text((await client.request({ method: 'GET', path: '/a' })).body);
      assert.throws(() => server.assertDone(), /1 step\(s\) never requested: step 2 \(second\)/);
    },
  );
});

test('a request after the script ended is held unanswered and fails assertDone', async () => {
  await withScenario(
    { name: 'short', steps: [{ expect: { path: '/a' }, respond: { status: 204 } }] },
    async (server, client) => {
      const first = await client.request({ method: 'GET', path: '/a' });
      assert.equal(first.statusCode, 204);
      await text(first.body);
      const extra = client.request({ method: 'GET', path: '/a?again=1' });
      extra.catch(() => undefined);
      await server.waitForRequests(2);
      assert.throws(() => server.assertDone(), /request after the script ended: GET \/a\?again=1/);
    },
  );
});
