import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { apiErrorFromResponse } from '../../../src/errors/api-error.js';
import { TransportError } from '../../../src/errors/raven-error.js';
import { OutageTracker, type OutageReport } from '../../../src/watch/outage-tracker.js';
import { stoppedStatus, type WatcherEvent, type WatcherStatus } from '../../../src/watch/watcher-events.js';

/** A refused connection as the transport reports it: the request's whole URL, then the cause. */
function refused(): Error {
  const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
  return new TransportError(
    'GET /api/v1/pods?watch=true&allowWatchBookmarks=true&timeoutSeconds=412&resourceVersion=1234: connect ECONNREFUSED 127.0.0.1:6443 (ECONNREFUSED)',
    { cause },
  );
}

function expired(): Error {
  return apiErrorFromResponse(
    410,
    JSON.stringify({
      kind: 'Status',
      code: 410,
      reason: 'Expired',
      message: 'too old resource version: 1234',
    }),
    { method: 'GET', path: '/api/v1/pods?watch=true&resourceVersion=1234' },
  );
}

/** Watches by scope, whose status the test sets as the watcher would. */
class Watches {
  readonly statuses = new Map<string, WatcherStatus>();

  constructor(scopes: readonly string[]) {
    for (const scope of scopes)
      this.statuses.set(scope, {
        ...stoppedStatus(),
        phase: 'watching',
        resourceVersion: '1234',
        synced: true,
      });
  }

  get(scope: string): WatcherStatus {
    const status = this.statuses.get(scope);
    assert.ok(status);
    return status;
  }

  /** A failed request: the watch backs off. */
  fail(scope: string, error: Error): WatcherEvent {
    const status = this.get(scope);
    status.phase = 'backoff';
    status.failures++;
    return { type: 'error', error, status: { ...status } };
  }

  /** A watch stream opened again (the server is back). */
  reconnect(scope: string): void {
    const status = this.get(scope);
    status.phase = 'watching';
    status.reconnects++;
  }
}

function setup(
  scopes: readonly string[],
  what = 'pods',
): {
  clock: FakeClock;
  watches: Watches;
  tracker: OutageTracker;
  reports: OutageReport[];
} {
  const clock = new FakeClock();
  const watches = new Watches(scopes);
  const reports: OutageReport[] = [];
  const tracker = new OutageTracker({
    what,
    server: 'https://127.0.0.1:6443',
    clock,
    status: (scope) => watches.statuses.get(scope),
    report: (r) => reports.push(r),
  });
  return { clock, watches, tracker, reports };
}

/** Every scope fails once a second for `seconds`, as a watcher backing off on refused connections does. */
async function refuseFor(
  seconds: number,
  s: ReturnType<typeof setup>,
  scopes: readonly string[] = [...s.watches.statuses.keys()],
): Promise<void> {
  for (let i = 0; i < seconds; i++) {
    for (const scope of scopes) s.tracker.observe(scope, s.watches.fail(scope, refused()));
    await s.clock.tick(1000);
  }
}

test('a 20 s outage healed by a resumed watch is two lines: the start and "reconnected; nothing missed"', async () => {
  const s = setup(['*']);
  await refuseFor(20, s);
  s.watches.reconnect('*');
  await s.clock.tick(2000);
  const lines = s.reports.map((r) => r.message);
  assert.ok(lines.length <= 6, lines.join('\n'));
  assert.deepEqual(lines, [
    'pods: cannot reach 127.0.0.1:6443 (connection refused); retrying',
    'pods: reconnected after 21 s; resumed from resourceVersion 1234; nothing missed',
  ]);
  const healed = s.reports[1];
  assert.equal(healed?.kind, 'healed');
  assert.equal(healed.attempts, 20);
  assert.equal(healed.mayHaveMissed, false);
  assert.equal(s.clock.pending, 0, 'no timer is left once healed');
});

test('no line carries the request URL, only the host and port', async () => {
  const s = setup(['*']);
  await refuseFor(40, s);
  s.watches.reconnect('*');
  await s.clock.tick(2000);
  for (const r of s.reports) assert.doesNotMatch(r.message, /\/api\/v1|watch=true|\?/, r.message);
});

test('an outage lasting 65 s says so every 30 s with the attempt count and the last error', async () => {
  const s = setup(['*']);
  await refuseFor(65, s);
  s.watches.reconnect('*');
  await s.clock.tick(2000);
  assert.deepEqual(
    s.reports.map((r) => r.message),
    [
      'pods: cannot reach 127.0.0.1:6443 (connection refused); retrying',
      'pods: still failing after 30 s, 30 attempts; last error: connection refused',
      'pods: still failing after 60 s, 60 attempts; last error: connection refused',
      'pods: reconnected after 66 s; resumed from resourceVersion 1234; nothing missed',
    ],
  );
});

test('a watch per namespace gives one line per outage, not one per namespace', async () => {
  const scopes = ['team-a', 'team-b', 'team-c'];
  const s = setup(scopes, 'pods in 3 namespaces');
  await refuseFor(20, s);
  for (const scope of scopes) s.watches.reconnect(scope);
  await s.clock.tick(2000);
  assert.deepEqual(
    s.reports.map((r) => r.message),
    [
      'pods in 3 namespaces: cannot reach 127.0.0.1:6443 (connection refused); retrying',
      'pods in 3 namespaces: reconnected after 21 s; 3 watches resumed from their resourceVersions; nothing missed',
    ],
  );
});

test('the outage heals only when every watch that failed is back', async () => {
  const scopes = ['team-a', 'team-b'];
  const s = setup(scopes);
  await refuseFor(5, s);
  s.watches.reconnect('team-a');
  await refuseFor(30, s, ['team-b']);
  assert.equal(
    s.reports.at(-1)?.message,
    'pods: still failing after 30 s (1 of 2 watches), 35 attempts; last error: connection refused',
  );
  s.watches.reconnect('team-b');
  await s.clock.tick(2000);
  assert.equal(s.reports.at(-1)?.kind, 'healed');
  assert.equal(s.reports.length, 3);
});

test('a change delivered by the resumed watch heals at once', async () => {
  const s = setup(['*']);
  await refuseFor(3, s);
  s.watches.reconnect('*');
  s.tracker.observe('*', { type: 'added', object: { metadata: { name: 'web' } } });
  assert.equal(
    s.reports.at(-1)?.message,
    'pods: reconnected after 3 s; resumed from resourceVersion 1234; nothing missed',
  );
});

test('a stream that opens and then fails again is not a recovery', async () => {
  const s = setup(['*']);
  await refuseFor(3, s);
  s.watches.reconnect('*');
  await s.clock.tick(500);
  await refuseFor(3, s);
  assert.deepEqual(
    s.reports.map((r) => r.kind),
    ['started'],
  );
});

test('an expired resourceVersion after the outage is reported as a relist, with its changes, that may have missed some', async () => {
  const s = setup(['*']);
  await refuseFor(10, s);
  s.tracker.observe('*', s.watches.fail('*', expired()));
  s.tracker.observe('*', { type: 'listing', relist: true });
  s.tracker.observe('*', { type: 'added', object: { metadata: { name: 'a' } } });
  s.tracker.observe('*', { type: 'deleted', object: { metadata: { name: 'b' } }, tombstone: true });
  await s.clock.tick(3000);
  assert.equal(s.reports.length, 1, 'a relist in progress is not a recovery');
  s.tracker.observe('*', { type: 'synced', resourceVersion: '2000', relist: true });
  const healed = s.reports.at(-1);
  assert.equal(
    healed?.message,
    "pods: reconnected after 13 s; relisted (resourceVersion 1234 had expired): 2 changes found, each object's latest state; states in between, and objects both created and deleted meanwhile, were not seen",
  );
  assert.equal(healed.kind === 'healed' && healed.mayHaveMissed, true);
});

test('an answer from the server is named as an answer, with its Status and without the request', () => {
  const s = setup(['*']);
  const unavailable = apiErrorFromResponse(
    503,
    JSON.stringify({ kind: 'Status', code: 503, reason: 'ServiceUnavailable', message: 'etcd is not ready' }),
    { method: 'GET', path: '/api/v1/pods?watch=true&resourceVersion=1234' },
  );
  s.tracker.observe('*', s.watches.fail('*', unavailable));
  assert.equal(
    s.reports[0]?.message,
    'pods: 127.0.0.1:6443 answered 503 ServiceUnavailable: etcd is not ready; retrying',
  );
});

test('errors the consumer reports itself are not counted', () => {
  const s = setup(['*']);
  const tracker = new OutageTracker({
    what: 'pods',
    clock: s.clock,
    status: (scope) => s.watches.statuses.get(scope),
    report: (r) => s.reports.push(r),
    counts: (error) => !(error instanceof TransportError),
  });
  tracker.observe('*', s.watches.fail('*', refused()));
  assert.equal(tracker.down, false);
  assert.deepEqual(s.reports, []);
});

test('closing the tracker mid-outage stops its timers without a heal line', async () => {
  const s = setup(['*']);
  await refuseFor(2, s);
  s.tracker.close();
  assert.equal(s.clock.pending, 0);
  await s.clock.tick(60_000);
  assert.deepEqual(
    s.reports.map((r) => r.kind),
    ['started'],
  );
});

test('a relist that finds nothing changed says so, and what a relist cannot see', async () => {
  const s = setup(['*']);
  await refuseFor(5, s);
  s.tracker.observe('*', s.watches.fail('*', expired()));
  s.tracker.observe('*', { type: 'listing', relist: true });
  s.tracker.observe('*', { type: 'synced', resourceVersion: '2000', relist: true });
  assert.equal(
    s.reports.at(-1)?.message,
    'pods: reconnected after 5 s; relisted (resourceVersion 1234 had expired): no object changed; only an object both created and deleted meanwhile could have gone unseen',
  );
});

test('watches that came back differently are each counted in the heal line', async () => {
  const scopes = ['team-a', 'team-b', 'team-c'];
  const s = setup(scopes, 'pods in 3 namespaces');
  await refuseFor(4, s);
  s.tracker.observe('team-a', s.watches.fail('team-a', expired()));
  s.tracker.observe('team-a', { type: 'listing', relist: true });
  s.tracker.observe('team-a', { type: 'added', object: { metadata: { name: 'new' } } });
  s.tracker.observe('team-a', { type: 'synced', resourceVersion: '2000', relist: true });
  s.tracker.observe('team-b', { type: 'bookmark', resourceVersion: '1300' });
  s.tracker.observe('team-c', {
    type: 'modified',
    object: { metadata: { name: 'web' } },
    previous: undefined,
  });
  assert.equal(
    s.reports.at(-1)?.message,
    "pods in 3 namespaces: reconnected after 4 s; 2 watches resumed from their resourceVersions, 1 watch relisted (their resourceVersions had expired): 1 change found, each object's latest state; states in between, and objects both created and deleted meanwhile, were not seen",
  );
});
