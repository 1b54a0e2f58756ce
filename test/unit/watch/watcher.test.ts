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
  until(pred: () => boolean, maxMs?: number, stepMs?: number): Promise<void>;
  types(): string[];
}

function start(
  script: Step[],
  options: {
    watchList?: boolean;
    inactivityTimeoutMs?: number;
    resume?: { resourceVersion: string; objects: object[] };
  } = {},
): Run {
  const clock = new FakeClock();
  const transport = new FakeTransport(script, clock);
  const watcher = watch({
    transport,
    path: '/api/v1/namespaces/ns/pods',
    clock,
    random: () => 0.5,
    watchList: options.watchList ?? false,
    ...(options.inactivityTimeoutMs === undefined
      ? {}
      : { inactivityTimeoutMs: options.inactivityTimeoutMs }),
    ...(options.resume === undefined ? {} : { resume: options.resume }),
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
    async until(pred, maxMs = 600_000, stepMs = 100) {
      for (let waited = 0; !pred(); waited += stepMs) {
        if (waited > maxMs)
          assert.fail(`condition not met after ${maxMs} virtual ms; events: ${JSON.stringify(this.types())}`);
        await clock.tick(stepMs);
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

test('a network error mid-stream is reported and the watch resumes from the last resourceVersion after a short backoff', async () => {
  const run = start([
    { list: { items: [pod('a', '1')], resourceVersion: '1' } },
    { events: [ev('MODIFIED', pod('a', '2'))], then: 'reset' },
    { events: [ev('MODIFIED', pod('a', '3'))], then: 'hang' },
  ]);
  await run.until(() => run.events.some((e) => e.type === 'error'), 600_000, 1);
  const requestsAtError = run.transport.requests.length;
  assert.equal(run.watcher.status().phase, 'backoff');
  await run.clock.tick(50);
  assert.equal(run.transport.requests.length, requestsAtError, 'waits before reconnecting');
  // The stream had delivered, so this is a first connection failure: 100 ms (random 0.5: no jitter).
  await run.clock.tick(60);
  assert.equal(run.transport.requests.length, requestsAtError + 1, 'reconnects after the short backoff');
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
  // A fallback, not a failure: no error event (a consumer such as the CLI would report it).
  assert.deepEqual(run.types(), ['initial:a', 'synced:2']);
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

/** Virtual times at which each request was made, ticking `stepMs` at a time until `count` requests. */
async function requestTimes(run: Run, count: number, stepMs = 10, maxMs = 600_000): Promise<number[]> {
  await run.clock.tick(0);
  const times: number[] = run.transport.requests.map(() => run.clock.now());
  const t0 = run.clock.now();
  while (run.transport.requests.length < count) {
    if (run.clock.now() - t0 > maxMs) assert.fail(`only ${run.transport.requests.length} requests`);
    const before = run.transport.requests.length;
    await run.clock.tick(stepMs);
    for (let i = before; i < run.transport.requests.length; i++) times.push(run.clock.now());
  }
  return times;
}

test('connection failures wait at most a second however many came before, and the watch is back within a second of the server answering', async () => {
  const refusals: Step[] = Array.from({ length: 30 }, () => ({ refuse: true as const }));
  const run = start([
    { list: { items: [pod('a', '1')], resourceVersion: '1' } },
    { events: [ev('MODIFIED', pod('a', '2'))], then: 'reset' },
    ...refusals,
    { events: [ev('MODIFIED', pod('a', '3'))], then: 'hang' },
  ]);
  const times = await requestTimes(run, 33);
  const gaps = times.slice(2).map((t, i) => t - (times[i + 1] ?? 0));
  assert.equal(gaps.length, 31);
  for (const gap of gaps) assert.ok(gap <= 1_010, `every wait is short: ${gaps.join(', ')}`);
  await run.until(() => run.types().includes('modified:a@3'));
  assert.equal(run.transport.requests[32]?.query.resourceVersion, '2', 'resumed, not relisted');
  assert.equal(run.watcher.status().failures, 0, 'a delivered event forgets the failures');
  await stop(run);
});

test('a stream that delivered events is resumed at once however short it was', async () => {
  const shorts: Step[] = [2, 3, 4, 5, 6].map((rv) => ({
    events: [ev('MODIFIED', pod('a', String(rv)))],
    then: 'end' as const,
  }));
  const run = start([{ list: { items: [pod('a', '1')], resourceVersion: '1' } }, ...shorts]);
  await run.until(() => run.transport.requests.length >= 7, 600_000, 1);
  assert.ok(
    run.clock.now() - 1_700_000_000_000 <= 1,
    `no backoff between segments (${run.clock.now() - 1_700_000_000_000} ms)`,
  );
  assert.deepEqual(
    run.transport.requests.slice(2).map((r) => r.query.resourceVersion),
    ['2', '3', '4', '5', '6'],
  );
  assert.equal(run.events.filter((e) => e.type === 'error').length, 0);
  await stop(run);
});

test('failed answers back off exponentially, honour Retry-After, and a delivered event forgets them', async () => {
  const run = start([
    { list: { items: [pod('a', '1')], resourceVersion: '1' } },
    { status: 500, body: status(500, 'InternalError') },
    { status: 503, body: status(503, 'ServiceUnavailable') },
    { status: 500, body: status(500, 'InternalError') },
    { status: 429, body: status(429, 'TooManyRequests'), retryAfter: '1' },
    { events: [ev('MODIFIED', pod('a', '2'))], then: 'reset' },
    { events: [], then: 'hang' },
  ]);
  const times = await requestTimes(run, 7, 1);
  const gaps = times.slice(1).map((t, i) => t - (times[i] ?? 0));
  // list → watch at once; random 0.5: no jitter on backoffs, Retry-After gets +10 %; then a
  // reset after a delivered event is a first connection failure.
  assert.deepEqual(gaps, [0, 800, 1_600, 3_200, 1_100, 100]);
  await stop(run);
});

test('a server that ignores sendInitialEvents and sends a plain bookmark is listed and watched instead, for good', async () => {
  const run = start(
    [
      { events: [ev('ADDED', pod('a', '3')), ev('ADDED', pod('b', '4')), bookmark('5')], then: 'hang' },
      { list: { items: [pod('a', '3'), pod('b', '4')], resourceVersion: '6' } },
      { status: 410, body: status(410, 'Expired') },
      { list: { items: [pod('a', '3')], resourceVersion: '9' } },
      { events: [], then: 'hang' },
    ],
    { watchList: true },
  );
  await run.until(() => run.transport.requests.length >= 5);
  assert.deepEqual(run.transport.requests[1]?.query, { limit: '500' });
  assert.equal(run.transport.requests[2]?.query.watch, 'true');
  assert.equal(
    run.transport.requests[3]?.query.watch,
    undefined,
    'the relist is a list, not a streaming list',
  );
  assert.equal(run.transport.requests[3]?.query.resourceVersionMatch, 'NotOlderThan');
  assert.equal(run.watcher.status().watchList, false);
  assert.deepEqual(
    run.types().filter((t) => !t.startsWith('error')),
    ['initial:a', 'initial:b', 'synced:6', 'deleted:b:tombstone', 'synced:9:relist'],
  );
  await stop(run);
});

test('a server that ignores sendInitialEvents and then goes quiet is listed after the initial-events deadline', async () => {
  const run = start(
    [
      { events: [ev('ADDED', pod('a', '3'))], then: 'hang' },
      { list: { items: [pod('a', '3')], resourceVersion: '6' } },
      { events: [], then: 'hang' },
    ],
    { watchList: true },
  );
  await run.clock.tick(14_000);
  assert.equal(run.transport.requests.length, 1, 'waits for the end bookmark a while');
  await run.until(() => run.transport.requests.length >= 3, 5_000);
  assert.deepEqual(run.transport.requests[1]?.query, { limit: '500' });
  assert.equal(run.watcher.status().watchList, false);
  assert.equal(run.events.filter((e) => e.type === 'error').length, 0, 'a fallback, not an error');
  assert.deepEqual(run.types(), ['initial:a', 'synced:6']);
  await stop(run);
});

test('a resumed watcher watches from the given resourceVersion against the given objects, and relists against them on 410', async () => {
  const clock = new FakeClock();
  const transport = new FakeTransport(
    [
      { events: [ev('MODIFIED', pod('a', '6')), ev('DELETED', pod('b', '7'))], then: 'end' },
      { status: 410, body: status(410, 'Expired') },
      { list: { items: [pod('a', '6'), pod('c', '8')], resourceVersion: '9' } },
      { events: [], then: 'hang' },
    ],
    clock,
  );
  const watcher = watch({
    transport,
    path: '/api/v1/namespaces/ns/pods',
    clock,
    random: () => 0.5,
    watchList: false,
    resume: { resourceVersion: '5', objects: [pod('a', '3'), pod('b', '4'), pod('d', '2')] },
  });
  assert.equal(watcher.status().synced, true);
  const events: WatcherEvent[] = [];
  const done = (async () => {
    for await (const e of watcher) events.push(e);
  })();
  for (let i = 0; i < 1000 && !events.some((e) => e.type === 'synced'); i++) await clock.tick(100);
  assert.equal(transport.requests[0]?.query.watch, 'true');
  assert.equal(transport.requests[0].query.resourceVersion, '5');
  assert.equal(transport.requests[2]?.query.resourceVersionMatch, 'NotOlderThan');
  const seen = events
    .filter((e) => e.type !== 'error' && e.type !== 'listing')
    .map((e) => {
      if (e.type === 'modified')
        return `modified:${e.object.metadata?.name ?? ''}<-${e.previous?.metadata?.resourceVersion ?? ''}`;
      if (e.type === 'deleted')
        return `deleted:${e.object.metadata?.name ?? ''}${e.tombstone ? ':tombstone' : ''}`;
      if (e.type === 'added') return `added:${e.object.metadata?.name ?? ''}`;
      return e.type === 'synced' ? `synced:${e.resourceVersion}:${String(e.relist)}` : e.type;
    });
  assert.deepEqual(seen, ['modified:a<-3', 'deleted:b', 'added:c', 'deleted:d:tombstone', 'synced:9:true']);
  assert.equal(watcher.status().relists, 1, "a resumed watcher's first list is a relist");
  watcher.close();
  await clock.tick(1);
  await done;
});

test('a list retried after connection failures is announced once and counts once; failed attempts are not reconnects', async () => {
  const run = start(
    [
      { refuse: true },
      { refuse: true },
      { refuse: true },
      {
        events: [ev('ADDED', pod('a', '3')), bookmark('5', { 'k8s.io/initial-events-end': 'true' })],
        then: 'reset',
      },
      { refuse: true },
      { events: [ev('MODIFIED', pod('a', '6'))], then: 'hang' },
    ],
    { watchList: true },
  );
  await run.until(() => run.types().includes('modified:a@6'));
  assert.equal(run.events.filter((e) => e.type === 'listing').length, 1);
  assert.equal(run.watcher.status().relists, 0);
  assert.equal(run.watcher.status().reconnects, 1, 'two streams were opened');
  await stop(run);
});

/** A pod named `name` of the incarnation `uid`. */
function incarnation(name: string, uid: string, rv: string): object {
  const p = pod(name, rv) as { metadata: Record<string, unknown> };
  return { ...p, metadata: { ...p.metadata, uid } };
}

/** A watcher resumed at `resourceVersion` with `objects`, fed `script`. */
function resumed(script: Step[], resourceVersion: string, objects: object[]): Run {
  return start(script, { resume: { resourceVersion, objects } });
}

/** `type name uid@rv <- uid@rv` (the previous state's identity), one per change. */
function identities(events: WatcherEvent[]): string[] {
  const id = (o: { metadata?: { uid?: string; resourceVersion?: string } } | undefined): string =>
    o === undefined ? '-' : `${o.metadata?.uid ?? ''}@${o.metadata?.resourceVersion ?? ''}`;
  return events.flatMap((e) => {
    if (e.type === 'added') return [`added ${id(e.object)}`];
    if (e.type === 'modified') return [`modified ${id(e.object)} <- ${id(e.previous)}`];
    if (e.type === 'deleted') return [`deleted ${id(e.object)}${e.tombstone ? ' tombstone' : ''}`];
    return [];
  });
}

test('resumed with two incarnations of one name, each is typed and diffed against its own state, and one deletion never removes the other', async () => {
  // A sharded replica resumes parts confirmed to different points: the old incarnation's part at
  // rv 3, the re-created one's further on. The replay brings the old one's last changes after.
  const run = resumed(
    [
      {
        events: [
          ev('MODIFIED', incarnation('a', 'old', '4')),
          ev('DELETED', incarnation('a', 'old', '5')),
          ev('MODIFIED', incarnation('a', 'new', '21')),
          ev('DELETED', incarnation('a', 'gone-long-ago', '22')),
          ev('MODIFIED', incarnation('a', 'new', '23')),
        ],
        then: 'hang',
      },
    ],
    '3',
    [incarnation('a', 'new', '20'), incarnation('a', 'old', '3')],
  );
  await run.until(() => identities(run.events).length >= 4);
  assert.deepEqual(identities(run.events), [
    'modified old@4 <- old@3',
    'deleted old@5',
    'modified new@21 <- new@20',
    // The deletion of an incarnation never delivered is not repeated, and removes nothing else.
    'modified new@23 <- new@21',
  ]);
  assert.equal(run.watcher.status().objects, 1);
  await stop(run);
});

test('a new incarnation arriving while another of its name is known is added, and the other still gets its own deletion', async () => {
  const run = resumed(
    [
      {
        events: [
          ev('ADDED', incarnation('a', 'new', '6')),
          ev('MODIFIED', incarnation('a', 'old', '7')),
          ev('DELETED', incarnation('a', 'old', '8')),
          ev('MODIFIED', incarnation('a', 'new', '9')),
        ],
        then: 'hang',
      },
    ],
    '5',
    [incarnation('a', 'old', '4')],
  );
  await run.until(() => identities(run.events).length >= 4);
  assert.deepEqual(identities(run.events), [
    'added new@6',
    'modified old@7 <- old@4',
    'deleted old@8',
    'modified new@9 <- new@6',
  ]);
  await stop(run);
});

test('a relist after a resume with two incarnations of one name keeps the listed one and tombstones the other', async () => {
  const run = resumed(
    [
      { status: 410, body: status(410, 'Expired') },
      { list: { items: [incarnation('a', 'old', '3')], resourceVersion: '30' } },
      { events: [], then: 'hang' },
    ],
    '3',
    [incarnation('a', 'new', '20'), incarnation('a', 'old', '3')],
  );
  await run.until(() => run.events.some((e) => e.type === 'synced'));
  assert.deepEqual(identities(run.events), ['deleted new@20 tombstone']);
  assert.equal(run.watcher.status().objects, 1);
  await stop(run);
});

test('a scope filter that says what it reads is shown only that on a live watch, every field on a list', async () => {
  const clock = new FakeClock();
  const other = (name: string, rv: string): object => {
    const object = pod(name, rv) as { metadata: Record<string, unknown> };
    return { ...object, metadata: { ...object.metadata, namespace: 'other' } };
  };
  const transport = new FakeTransport(
    [
      { list: { items: [pod('a', '10'), other('b', '10')], resourceVersion: '10' } },
      { events: [ev('MODIFIED', other('b', '11')), ev('MODIFIED', pod('a', '12'))], then: 'hang' },
    ],
    clock,
  );
  const peeks: object[] = [];
  const watcher = watch({
    transport,
    path: '/api/v1/pods',
    clock,
    random: () => 0.5,
    watchList: false,
    accept: (peek) => {
      peeks.push({ ...peek });
      return peek.namespace === 'ns';
    },
    acceptReads: ['namespace'],
  });
  const events: WatcherEvent[] = [];
  const done = (async () => {
    for await (const e of watcher) events.push(e);
  })();
  for (let waited = 0; !events.some((e) => e.type === 'modified'); waited += 100) {
    if (waited > 600_000) assert.fail(`no modified event; peeks: ${JSON.stringify(peeks)}`);
    await clock.tick(100);
  }
  assert.deepEqual(
    events.filter((e) => e.type !== 'listing').map((e) => e.type),
    ['initial', 'synced', 'modified'],
  );
  // The list compares every item with what is known, so it reads every field; the live watch
  // reads the namespace the filter asked for and the resourceVersion the watcher moves on with.
  assert.deepEqual(peeks, [
    { namespace: 'ns', name: 'a', uid: 'uid-a', resourceVersion: '10' },
    { namespace: 'other', name: 'b', uid: 'uid-b', resourceVersion: '10' },
    { type: 'MODIFIED', namespace: 'other', resourceVersion: '11' },
    { type: 'MODIFIED', namespace: 'ns', resourceVersion: '12' },
  ]);
  assert.equal(watcher.status().resourceVersion, '12');
  watcher.close();
  await clock.tick(1);
  await done;
});
