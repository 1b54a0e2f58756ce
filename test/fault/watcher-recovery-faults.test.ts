/**
 * The watcher over real sockets when the server answers with what a real apiserver sends only
 * under pressure or with special configuration: 429 with Retry-After, 410 on a watch or a continue
 * token, streams that end at once, a refused streaming initial list, 403. The client is the real
 * one; the server plays a script and checks every request's query.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { ScriptStep } from './scripted-server.js';
import {
  PODS,
  assertPlayed,
  bookmarkLine,
  errors,
  line,
  listBody,
  listQuery,
  pod,
  requestLog,
  startRun,
  statusBody,
  watchListQuery,
  watchQuery,
} from './watcher-harness.js';

/** Real timers may fire a little early against Date.now(); lower bounds allow for that. */
const TOLERANCE_MS = 10;

const list = (items: object[], resourceVersion: string): ScriptStep => ({
  name: 'list',
  expect: { path: PODS, query: listQuery({ limit: 500 }) },
  respond: { body: [listBody(items, resourceVersion)] },
});

test('429 with Retry-After on a watch delays the next request by at least Retry-After', async (t) => {
  const run = await startRun(t, {
    name: '429 on the watch',
    steps: [
      list([pod('a', '10')], '10'),
      {
        name: 'throttled',
        expect: { path: PODS, query: watchQuery('10') },
        respond: {
          status: 429,
          headers: { 'retry-after': '1' },
          body: [statusBody(429, 'TooManyRequests', 'Too many requests, please try again later.')],
        },
      },
      {
        name: 'watch',
        expect: { path: PODS, query: watchQuery('10') },
        respond: { body: [bookmarkLine('11')], then: 'stall' },
      },
    ],
  });
  await run.until((events) => events.some((e) => e.type === 'bookmark'));
  assertPlayed(run);
  assert.deepEqual(run.types(), ['initial:a', 'synced:10', 'error:api:429', 'bookmark:11']);
  assert.match(errors(run.events)[0]?.error.message ?? '', /Too many requests/);
  const [, throttled, retried] = run.server.requests;
  assert.ok(throttled && retried);
  const waited = retried.at - throttled.at;
  assert.ok(waited >= 1000 - TOLERANCE_MS, `retried ${waited} ms after the 429, asked for 1000 ms`);
  assert.equal(run.watcher.status().relists, 0);
});

for (const how of ['HTTP status', 'in-stream ERROR event'] as const) {
  test(`410 as ${how} relists not older than the last resourceVersion, with tombstones and nothing for unchanged objects`, async (t) => {
    const expired = statusBody(410, 'Expired', 'too old resource version: 4 (50)');
    const gone: ScriptStep['respond'] =
      how === 'HTTP status'
        ? { status: 410, body: [expired] }
        : { body: [line('ERROR', JSON.parse(expired) as object)], then: 'end' };
    const run = await startRun(t, {
      name: `410 as ${how}`,
      steps: [
        list([pod('a', '1'), pod('b', '2'), pod('c', '3')], '3'),
        {
          name: 'watch ends after a bookmark',
          expect: { path: PODS, query: watchQuery('3') },
          respond: { body: [bookmarkLine('4')] },
        },
        { name: 'expired', expect: { path: PODS, query: watchQuery('4') }, respond: gone },
        {
          name: 'relist',
          expect: { path: PODS, query: listQuery({ limit: 500, resourceVersion: '4' }) },
          respond: { body: [listBody([pod('a', '1'), pod('c', '40'), pod('d', '41')], '50')] },
        },
        {
          name: 'watch from the relist',
          expect: { path: PODS, query: watchQuery('50') },
          respond: { body: [bookmarkLine('51')], then: 'stall' },
        },
      ],
    });
    await run.until((events) => events.some((e) => e.type === 'bookmark' && e.resourceVersion === '51'));
    assertPlayed(run);
    assert.deepEqual(run.types(), [
      'initial:a',
      'initial:b',
      'initial:c',
      'synced:3',
      'bookmark:4',
      'error:api:410',
      'modified:c@40',
      'added:d',
      'deleted:b:tombstone',
      'synced:50:relist',
      'bookmark:51',
    ]);
    const tombstone = run.events.find((e) => e.type === 'deleted');
    assert.equal(tombstone?.type === 'deleted' ? tombstone.object.metadata?.resourceVersion : undefined, '2');
    assert.deepEqual(requestLog(run.server), [
      'list',
      'watch rv=3',
      'watch rv=4',
      'list rv=4',
      'watch rv=50',
    ]);
    assert.equal(run.watcher.status().relists, 1);
  });
}

test('an expired continue token restarts the list once, in full without limit, and delivers no object twice', async (t) => {
  const run = await startRun(
    t,
    {
      name: 'expired continue token',
      steps: [
        {
          name: 'first page',
          expect: { path: PODS, query: listQuery({ limit: 2 }) },
          respond: { body: [listBody([pod('a', '1'), pod('b', '2')], '7', 'token-1')] },
        },
        {
          name: 'second page, token expired',
          expect: { path: PODS, query: listQuery({ limit: 2, continue: 'token-1' }) },
          respond: {
            status: 410,
            body: [
              statusBody(
                410,
                'Expired',
                'The provided continue parameter is too old to display a consistent list result.',
              ),
            ],
          },
        },
        {
          name: 'one full list',
          expect: { path: PODS, query: listQuery() },
          respond: {
            body: [listBody([pod('a', '1'), pod('b', '2'), pod('c', '3'), pod('d', '4')], '9')],
          },
        },
        {
          name: 'watch',
          expect: { path: PODS, query: watchQuery('9') },
          respond: { body: [bookmarkLine('10')], then: 'stall' },
        },
      ],
    },
    { pageSize: 2 },
  );
  await run.until((events) => events.some((e) => e.type === 'bookmark'));
  assertPlayed(run);
  assert.deepEqual(run.types(), [
    'initial:a',
    'initial:b',
    'error:api:410',
    'initial:c',
    'initial:d',
    'synced:9',
    'bookmark:10',
  ]);
});

test('a server that ends every stream at once is retried with growing delays, a bounded number of times', async (t) => {
  const backoff = { initialMs: 20, maxMs: 200, jitter: 0 };
  const run = await startRun(
    t,
    {
      name: 'every stream ends at once',
      steps: [
        list([], '1'),
        { name: 'empty watch', expect: { path: PODS, query: watchQuery('1') }, respond: {}, times: Infinity },
      ],
    },
    { backoff },
  );
  const windowMs = 1_000;
  // Wait for four watch requests (three gaps to check), then for the window after the first to
  // pass: how many requests a busy machine fits in the window is no condition, only the bound is.
  await run.requests(5);
  const start = run.server.requests[1]?.at ?? 0;
  const rest = start + windowMs - Date.now();
  if (rest > 0) await delay(rest);
  await run.stop();
  assertPlayed(run);
  const watches = run.server.requests.slice(1);
  const inWindow = watches.filter((r) => r.at <= start + windowMs);
  // Each wait is at least the backoff's delay for that many failures: initialMs, doubling, up to maxMs.
  const nominal = (failures: number): number => Math.min(backoff.maxMs, backoff.initialMs * 2 ** failures);
  // The most requests those waits allow in the window: the first, then one after each wait.
  let bound = 1;
  for (let elapsed = nominal(0); elapsed <= windowMs + TOLERANCE_MS; elapsed += nominal(bound - 1)) bound++;
  assert.ok(
    inWindow.length <= bound,
    `${inWindow.length} watch requests in ${windowMs} ms, at most ${bound} expected`,
  );
  const gaps = watches.slice(1).map((r, i) => r.at - (watches[i]?.at ?? 0));
  gaps.forEach((gap, i) => {
    assert.ok(
      gap >= nominal(i) - TOLERANCE_MS,
      `gap ${i + 1} is ${gap} ms, at least ${nominal(i)} ms expected: ${gaps.join(', ')}`,
    );
  });
  assert.deepEqual(errors(run.events), [], 'a normal end is not an error');
  assert.ok(run.watcher.status().failures >= 3, 'each quick end counts as a failure');
});

test('the streaming initial list delivers initial objects, syncs at the initial-events-end bookmark and resumes as a plain watch', async (t) => {
  const end = (rv: string): string => bookmarkLine(rv, { 'k8s.io/initial-events-end': 'true' });
  const run = await startRun(
    t,
    {
      name: 'streaming initial list',
      steps: [
        {
          name: 'initial events, then a reset',
          expect: { path: PODS, query: watchListQuery('') },
          respond: {
            body: [
              line('ADDED', pod('a', '3')),
              line('ADDED', pod('b', '4')),
              line('ADDED', pod('c', '5')),
              end('6'),
              line('MODIFIED', pod('a', '7')),
            ],
            then: 'reset',
          },
        },
        {
          name: 'resume as a plain watch, then 410',
          expect: { path: PODS, query: watchQuery('7') },
          respond: {
            body: [
              line('MODIFIED', pod('b', '8')),
              line(
                'ERROR',
                JSON.parse(statusBody(410, 'Expired', 'too old resource version: 8 (20)')) as object,
              ),
            ],
          },
        },
        {
          name: 'streaming relist not older than the last resourceVersion',
          expect: { path: PODS, query: watchListQuery('8') },
          respond: {
            body: [line('ADDED', pod('a', '7')), line('ADDED', pod('b', '9')), end('20')],
            then: 'stall',
          },
        },
      ],
    },
    { watchList: true },
  );
  await run.until((events) => events.some((e) => e.type === 'synced' && e.relist));
  assertPlayed(run);
  assert.deepEqual(run.types(), [
    'initial:a',
    'initial:b',
    'initial:c',
    'synced:6',
    'modified:a@7',
    'error:transport',
    'modified:b@8',
    'error:api:410',
    'modified:b@9',
    'deleted:c:tombstone',
    'synced:20:relist',
  ]);
  assert.deepEqual(requestLog(run.server), ['watchList rv=', 'watch rv=7', 'watchList rv=8']);
  const status = run.watcher.status();
  assert.equal(status.watchList, true);
  assert.equal(status.phase, 'watching');
});

for (const refusal of [
  // What a server that predates the streaming initial list answers: it forbids resourceVersionMatch on a watch.
  {
    code: 422,
    reason: 'Invalid',
    message: 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch',
  },
  { code: 400, reason: 'BadRequest', message: 'sendInitialEvents is not supported here' },
]) {
  test(`a streaming initial list refused with ${refusal.code} falls back to list+watch, and later relists are lists`, async (t) => {
    const run = await startRun(
      t,
      {
        name: `watchList refused with ${refusal.code}`,
        steps: [
          {
            name: 'refused',
            expect: { path: PODS, query: watchListQuery('') },
            respond: {
              status: refusal.code,
              body: [statusBody(refusal.code, refusal.reason, refusal.message)],
            },
          },
          list([pod('a', '1')], '2'),
          {
            name: 'watch, expired',
            expect: { path: PODS, query: watchQuery('2') },
            respond: { status: 410, body: [statusBody(410, 'Expired', 'too old resource version: 2 (9)')] },
          },
          {
            name: 'relist',
            expect: { path: PODS, query: listQuery({ limit: 500, resourceVersion: '2' }) },
            respond: { body: [listBody([pod('a', '1')], '9')] },
          },
          {
            name: 'watch',
            expect: { path: PODS, query: watchQuery('9') },
            respond: { body: [bookmarkLine('10')], then: 'stall' },
          },
        ],
      },
      { watchList: true },
    );
    await run.until((events) => events.some((e) => e.type === 'bookmark'));
    assertPlayed(run);
    // The refusal is a fallback, not a failure: no error event for it (the plain list answers).
    assert.deepEqual(run.types(), [
      'initial:a',
      'synced:2',
      'error:api:410',
      'synced:9:relist',
      'bookmark:10',
    ]);
    assert.equal(errors(run.events).length, 1);
    assert.equal(run.watcher.status().watchList, false);
  });
}

test('403 puts the watcher in the failing phase with the Status message while its retries go on', async (t) => {
  const forbidden = (verb: string): ScriptStep['respond'] => ({
    status: 403,
    body: [
      statusBody(
        403,
        'Forbidden',
        `pods is forbidden: User "system:anonymous" cannot ${verb} resource "pods" in API group "" in the namespace "shop"`,
      ),
    ],
  });
  const run = await startRun(t, {
    name: '403',
    steps: [
      {
        name: 'list forbidden',
        expect: { path: PODS, query: listQuery({ limit: 500 }) },
        respond: forbidden('list'),
        times: 3,
      },
      list([pod('a', '1')], '1'),
      {
        name: 'watch forbidden',
        expect: { path: PODS, query: watchQuery('1') },
        respond: forbidden('watch'),
      },
      {
        name: 'watch',
        expect: { path: PODS, query: watchQuery('1') },
        respond: { body: [bookmarkLine('2')], then: 'stall' },
      },
    ],
  });
  await run.until((events) => events.some((e) => e.type === 'bookmark'));
  assertPlayed(run);
  assert.deepEqual(run.types(), [
    'error:api:403',
    'error:api:403',
    'error:api:403',
    'initial:a',
    'synced:1',
    'error:api:403',
    'bookmark:2',
  ]);
  const reported = errors(run.events).map((e) => e.status);
  for (const status of reported) assert.equal(status.phase, 'failing');
  assert.match(reported[0]?.lastError?.message ?? '', /cannot list resource "pods"/);
  assert.match(reported[3]?.lastError?.message ?? '', /cannot watch resource "pods"/);
  assert.equal(run.watcher.status().phase, 'watching');
});
