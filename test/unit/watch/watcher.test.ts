import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { watch, type Watcher } from '../../../src/watch/watcher.js';
import type { WatcherEvent } from '../../../src/watch/watcher-events.js';
import { FakeTransport, bookmark, ev, pod, status, type Step } from './fake-transport.js';

interface Run {
  watcher: Watcher;
  transport: FakeTransport;
  clock: FakeClock;
  events: WatcherEvent[];
  done: Promise<void>;
  until(pred: () => boolean, maxMs?: number): Promise<void>;
  types(): string[];
}

function start(script: Step[], options: { watchList?: boolean; inactivityTimeoutMs?: number } = {}): Run {
  const clock = new FakeClock();
  const transport = new FakeTransport(script, clock);
  const watcher = watch({
    transport,
    path: '/api/v1/namespaces/ns/pods',
    clock,
    random: () => 0.5,
    watchList: options.watchList ?? false,
    inactivityTimeoutMs: options.inactivityTimeoutMs,
  });
  const events: WatcherEvent[] = [];
  const done = (async () => {
    for await (const e of watcher) events.push(e);
  })();
  return {
    watcher,
    transport,
    clock,
    events,
    done,
    async until(pred, maxMs = 600_000) {
      for (let waited = 0; !pred(); waited += 100) {
        if (waited > maxMs)
          assert.fail(`condition not met after ${maxMs} virtual ms; events: ${JSON.stringify(this.types())}`);
        await clock.tick(100);
      }
    },
    types() {
      // 'listing' markers are checked by their own test; the rest read better without them.
      return events
        .filter((e) => e.type !== 'listing')
        .map((e) => {
          switch (e.type) {
            case 'initial':
            case 'added':
              return `${e.type}:${e.object.metadata?.name ?? ''}`;
            case 'modified':
              return `modified:${e.object.metadata?.name ?? ''}@${e.object.metadata?.resourceVersion ?? ''}`;
            case 'deleted':
              return `deleted:${e.object.metadata?.name ?? ''}${e.tombstone ? ':tombstone' : ''}`;
            case 'synced':
              return `synced:${e.resourceVersion}${e.relist ? ':relist' : ''}`;
            case 'bookmark':
              return `bookmark:${e.resourceVersion}`;
            case 'error':
              return `error:${e.error.message.slice(0, 40)}`;
          }
        });
    },
  };
}

async function stop(run: Run): Promise<void> {
  run.watcher.close();
  await run.clock.tick(1);
  await run.done;
}

test('lists page by page, then watches from the list resourceVersion with bookmarks and a timeout', async () => {
  const run = start([
    { list: { items: [pod('a', '10'), pod('b', '11')], resourceVersion: '20', continue: 'tok1' } },
    { list: { items: [pod('c', '12')], resourceVersion: '20' } },
    { events: [ev('ADDED', pod('d', '21'))], then: 'hang' },
  ]);
  await run.until(() => run.types().length >= 5);
  assert.deepEqual(run.types(), ['initial:a', 'initial:b', 'initial:c', 'synced:20', 'added:d']);
  const [first, second, third] = run.transport.requests;
  assert.deepEqual(first?.query, { limit: '500' });
  assert.deepEqual(
    second?.query,
    { limit: '500', continue: 'tok1' },
    'a continue request carries no resourceVersion',
  );
  assert.ok(third);
  assert.equal(third.query.watch, 'true');
  assert.equal(third.query.resourceVersion, '20');
  assert.equal(third.query.allowWatchBookmarks, 'true');
  const timeout = Number(third.query.timeoutSeconds);
  assert.ok(timeout >= 300 && timeout < 600, `timeoutSeconds ${timeout} in [300, 600)`);
  assert.equal(run.watcher.status().synced, true);
  assert.equal(run.watcher.status().phase, 'watching');
  await stop(run);
});

test('delivers modified with the previous object, deleted once, and nothing for an unchanged resourceVersion', async () => {
  const run = start([
    { list: { items: [pod('a', '10')], resourceVersion: '10' } },
    {
      events: [
        ev('MODIFIED', pod('a', '11', { status: { phase: 'Running' } })),
        ev('MODIFIED', pod('a', '11', { status: { phase: 'Running' } })),
        ev('DELETED', pod('a', '12')),
        ev('DELETED', pod('a', '12')),
      ],
      then: 'hang',
    },
  ]);
  await run.until(() => run.types().length >= 4);
  await run.clock.tick(1000);
  assert.deepEqual(run.types(), ['initial:a', 'synced:10', 'modified:a@11', 'deleted:a']);
  const modified = run.events.find((e) => e.type === 'modified');
  assert.ok(modified?.type === 'modified');
  assert.equal(modified.previous?.metadata?.resourceVersion, '10');
  await stop(run);
});

test('a stream that ends normally after a long life is resumed at once from the last resourceVersion', async () => {
  const run = start([
    { list: { items: [], resourceVersion: '5' } },
    { events: [ev('ADDED', pod('a', '6')), bookmark('9')], then: 'end', endAfterMs: 300_000 },
    { events: [], then: 'hang' },
  ]);
  await run.until(() => run.transport.requests.length >= 2);
  await run.clock.tick(299_000);
  assert.equal(run.transport.requests.length, 2, 'the stream is still open');
  await run.clock.tick(1_000);
  assert.equal(run.transport.requests.length, 3, 'resumed with no backoff');
  assert.equal(run.transport.requests[2]?.query.resourceVersion, '9', 'resumes from the bookmark');
  assert.equal(run.transport.requests[2].query.watch, 'true', 'no relist');
  assert.equal(run.events.filter((e) => e.type === 'error').length, 0);
  await stop(run);
});

test('a network error mid-stream is reported and the watch resumes from the last resourceVersion after a backoff', async () => {
  const run = start([
    { list: { items: [pod('a', '1')], resourceVersion: '1' } },
    { events: [ev('MODIFIED', pod('a', '2'))], then: 'reset' },
    { events: [ev('MODIFIED', pod('a', '3'))], then: 'hang' },
  ]);
  await run.until(() => run.events.some((e) => e.type === 'error'));
  const requestsAtError = run.transport.requests.length;
  assert.equal(run.watcher.status().phase, 'backoff');
  await run.clock.tick(400);
  assert.equal(run.transport.requests.length, requestsAtError, 'waits before reconnecting');
  await run.until(() => run.types().length >= 5);
  assert.deepEqual(run.types().slice(0, 5), [
    'initial:a',
    'synced:1',
    'modified:a@2',
    'error:read ECONNRESET',
    'modified:a@3',
  ]);
  const resume = run.transport.requests[2];
  assert.equal(resume?.query.resourceVersion, '2');
  assert.equal(resume.query.watch, 'true');
  assert.equal(run.watcher.status().reconnects, 1);
  assert.equal(run.watcher.status().relists, 0);
  await stop(run);
});

for (const how of ['HTTP status', 'ERROR event'] as const) {
  test(`410 as ${how} relists not older than the last resourceVersion and reconciles with tombstones`, async () => {
    const expired: Step =
      how === 'HTTP status'
        ? { status: 410, body: status(410, 'Expired', 'too old resource version: 3 (50)') }
        : { events: [ev('ERROR', status(410, 'Expired', 'too old resource version: 3 (50)'))], then: 'end' };
    const run = start([
      { list: { items: [pod('a', '1'), pod('b', '2'), pod('c', '3')], resourceVersion: '3' } },
      { events: [], then: 'reset' },
      expired,
      { list: { items: [pod('a', '1'), pod('c', '40'), pod('d', '41')], resourceVersion: '50' } },
      { events: [], then: 'hang' },
    ]);
    await run.until(() => run.events.some((e) => e.type === 'synced' && e.relist));
    const after = run.types().slice(run.types().indexOf('synced:3') + 1);
    assert.deepEqual(
      after.filter((t) => !t.startsWith('error')),
      ['modified:c@40', 'added:d', 'deleted:b:tombstone', 'synced:50:relist'],
    );
    const relist = run.transport.requests[3];
    assert.deepEqual(relist?.query, {
      limit: '500',
      resourceVersion: '3',
      resourceVersionMatch: 'NotOlderThan',
    });
    await run.until(() => run.transport.requests.length >= 5);
    assert.equal(run.transport.requests[4]?.query.resourceVersion, '50');
    assert.equal(run.watcher.status().relists, 1);
    await stop(run);
  });
}

test('a relist that is itself expired falls back to a consistent list', async () => {
  const run = start([
    { list: { items: [pod('a', '1')], resourceVersion: '1' } },
    { status: 410, body: status(410, 'Expired') },
    { status: 410, body: status(410, 'Expired') },
    { list: { items: [pod('a', '1')], resourceVersion: '90' } },
    { events: [], then: 'hang' },
  ]);
  await run.until(() => run.transport.requests.length >= 5);
  assert.deepEqual(run.transport.requests[3]?.query, { limit: '500' }, 'consistent: no resourceVersion');
  assert.deepEqual(
    run.types().filter((t) => !t.startsWith('error')),
    ['initial:a', 'synced:1', 'synced:90:relist'],
  );
  await stop(run);
});

test('an expired continue token restarts the list once as one full list without limit', async () => {
  const run = start([
    { list: { items: [pod('a', '1')], resourceVersion: '7', continue: 'old' } },
    { status: 410, body: status(410, 'Expired', 'The provided continue parameter is too old') },
    { list: { items: [pod('a', '1'), pod('b', '2')], resourceVersion: '9' } },
    { events: [], then: 'hang' },
  ]);
  await run.until(() => run.transport.requests.length >= 4);
  assert.deepEqual(run.transport.requests[2]?.query, {}, 'full list: no limit, no continue');
  assert.deepEqual(
    run.types().filter((t) => !t.startsWith('error')),
    ['initial:a', 'initial:b', 'synced:9'],
    'the object from the first page is not delivered twice',
  );
  await stop(run);
});

test('403 is exposed as a failing state with the Status message while retries back off', async () => {
  const forbidden: Step = {
    status: 403,
    body: status(403, 'Forbidden', 'pods is forbidden: User "x" cannot list'),
  };
  const run = start([
    forbidden,
    forbidden,
    forbidden,
    { list: { items: [], resourceVersion: '1' } },
    { events: [], then: 'hang' },
  ]);
  await run.until(() => run.events.some((e) => e.type === 'error'));
  const st = run.watcher.status();
  assert.equal(st.phase, 'failing');
  assert.match(st.lastError?.message ?? '', /cannot list/);
  assert.equal(st.lastError?.kind, 'api:403');
  await run.until(() => run.watcher.status().synced);
  assert.equal(run.watcher.status().phase, 'watching');
  await stop(run);
});

test('429 on a watch waits at least the Retry-After the server asked for', async () => {
  const run = start([
    { list: { items: [], resourceVersion: '1' } },
    { status: 429, body: status(429, 'TooManyRequests'), retryAfter: '7' },
    { events: [], then: 'hang' },
  ]);
  await run.until(() => run.events.some((e) => e.type === 'error'));
  assert.equal(run.watcher.status().phase, 'backoff', 'throttling is not a failure');
  await run.clock.tick(6_500);
  assert.equal(run.transport.requests.length, 2, 'not before 7 s');
  await run.until(() => run.transport.requests.length >= 3, 2_000);
  await stop(run);
});

test('a server that ends every stream at once is retried with growing delays, not in a spin', async () => {
  const ends: Step[] = Array.from({ length: 8 }, () => ({ events: [], then: 'end' as const }));
  const run = start([{ list: { items: [], resourceVersion: '1' } }, ...ends]);
  const times: number[] = [];
  let seen = 0;
  for (let i = 0; i < 8000 && times.length < 7; i++) {
    await run.clock.tick(100);
    if (run.transport.requests.length > seen) {
      seen = run.transport.requests.length;
      times.push(run.clock.now());
    }
  }
  const gaps = times.slice(1).map((t, i) => t - (times[i] ?? 0));
  assert.ok(gaps.length >= 5, `reconnected ${gaps.length} times`);
  for (let i = 1; i < gaps.length; i++)
    assert.ok((gaps[i] ?? 0) >= (gaps[i - 1] ?? 0), `gaps grow: ${gaps.join(', ')}`);
  assert.ok((gaps[0] ?? 0) >= 600, `first gap ${gaps[0]} ms is a backoff, not a spin`);
  await stop(run);
});

test('a stream that goes silent is declared dead after the inactivity timeout and resumed', async () => {
  const run = start(
    [
      { list: { items: [], resourceVersion: '4' } },
      { events: [bookmark('8')], then: 'hang' },
      { events: [], then: 'hang' },
    ],
    { inactivityTimeoutMs: 90_000 },
  );
  await run.until(() => run.transport.requests.length >= 2);
  await run.clock.tick(80_000);
  assert.equal(run.transport.requests.length, 2);
  await run.until(() => run.transport.requests.length >= 3, 20_000);
  assert.match(run.types().find((t) => t.startsWith('error')) ?? '', /no data for 90 s/);
  assert.equal(run.transport.requests[2]?.query.resourceVersion, '8');
  await stop(run);
});

test('the streaming initial list delivers initial objects, syncs at the end bookmark and goes on as a watch', async () => {
  const run = start(
    [
      {
        events: [
          ev('ADDED', pod('a', '3')),
          ev('ADDED', pod('b', '4')),
          bookmark('5', { 'k8s.io/initial-events-end': 'true' }),
          ev('MODIFIED', pod('a', '6')),
        ],
        then: 'hang',
      },
    ],
    { watchList: true },
  );
  await run.until(() => run.types().length >= 4);
  assert.deepEqual(run.types(), ['initial:a', 'initial:b', 'synced:5', 'modified:a@6']);
  assert.deepEqual(
    { ...run.transport.requests[0]?.query, timeoutSeconds: 'x' },
    {
      watch: 'true',
      allowWatchBookmarks: 'true',
      timeoutSeconds: 'x',
      sendInitialEvents: 'true',
      resourceVersionMatch: 'NotOlderThan',
      resourceVersion: '',
    },
  );
  assert.equal(run.watcher.status().watchList, true);
  await stop(run);
});

test('a server that refuses the streaming initial list is listed and watched instead', async () => {
  const run = start(
    [
      { status: 422, body: status(422, 'Invalid', 'sendInitialEvents is forbidden') },
      { list: { items: [pod('a', '1')], resourceVersion: '2' } },
      { events: [], then: 'hang' },
    ],
    { watchList: true },
  );
  await run.until(() => run.transport.requests.length >= 3);
  assert.deepEqual(run.transport.requests[1]?.query, { limit: '500' });
  assert.equal(run.watcher.status().watchList, false);
  assert.deepEqual(
    run.types().filter((t) => !t.startsWith('error')),
    ['initial:a', 'synced:2'],
  );
  await stop(run);
});

test('an object deleted and re-created under the same name while away is a tombstone and an add', async () => {
  const run = start([
    { list: { items: [pod('a', '1')], resourceVersion: '1' } },
    { status: 410, body: status(410, 'Expired') },
    {
      list: {
        items: [
          { ...pod('a', '9'), metadata: { name: 'a', namespace: 'ns', uid: 'new', resourceVersion: '9' } },
        ],
        resourceVersion: '9',
      },
    },
    { events: [], then: 'hang' },
  ]);
  await run.until(() => run.events.some((e) => e.type === 'synced' && e.relist));
  assert.deepEqual(
    run.types().filter((t) => !t.startsWith('error')),
    ['initial:a', 'synced:1', 'deleted:a:tombstone', 'added:a', 'synced:9:relist'],
  );
  await stop(run);
});

test('connection refused keeps retrying with backoff until the server is back', async () => {
  const run = start([
    { refuse: true },
    { refuse: true },
    { list: { items: [], resourceVersion: '1' } },
    { events: [], then: 'hang' },
  ]);
  await run.until(() => run.watcher.status().synced);
  assert.equal(run.events.filter((e) => e.type === 'error').length, 2);
  await stop(run);
});

test('aborting the signal ends the iteration', async () => {
  const clock = new FakeClock();
  const controller = new AbortController();
  const transport = new FakeTransport([{ list: { items: [], resourceVersion: '1' } }]);
  const watcher = watch({
    transport,
    path: '/api/v1/pods',
    clock,
    watchList: false,
    signal: controller.signal,
  });
  const seen: string[] = [];
  const done = (async () => {
    for await (const e of watcher) seen.push(e.type);
  })();
  await clock.tick(100);
  controller.abort();
  await clock.tick(100);
  await done;
  assert.deepEqual(seen, ['listing', 'synced']);
  assert.equal(watcher.status().phase, 'stopped');
});

test('a list and a relist are announced before their results, so a cache can swap them in at once', async () => {
  const run = start([
    { list: { items: [pod('a', '1')], resourceVersion: '1' } },
    { status: 410, body: status(410, 'Expired') },
    { list: { items: [pod('b', '2')], resourceVersion: '2' } },
    { events: [], then: 'hang' },
  ]);
  await run.until(() => run.events.some((e) => e.type === 'synced' && e.relist));
  const sequence = run.events
    .filter((e) => e.type !== 'error')
    .map((e) => (e.type === 'listing' ? `listing:${e.relist}` : e.type));
  assert.deepEqual(sequence, [
    'listing:false',
    'initial',
    'synced',
    'listing:true',
    'added',
    'deleted',
    'synced',
  ]);
  await stop(run);
});
