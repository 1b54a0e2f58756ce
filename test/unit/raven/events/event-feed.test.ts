import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../../src/client/kube-object.js';
import type { ChangeEvent } from '../../../../src/raven/model/change-event.js';
import { EventFeed } from '../../../../src/raven/events/event-feed.js';
import { readOccurrence, type InvolvedObject } from '../../../../src/raven/model/event-occurrence.js';
import { occurrencePasses } from '../../../../src/raven/events/occurrence-filter.js';
import { toChangeEvent } from '../../../../src/raven/model/to-change-event.js';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString();

function coreEvent(count: number, last: number, overrides: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'web.1', namespace: 'shop', uid: 'e-1', resourceVersion: String(count) },
    involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: 'web-1', uid: 'p-1' },
    reason: 'BackOff',
    type: 'Warning',
    message: 'Back-off restarting failed container',
    source: { component: 'kubelet', host: 'node-a' },
    count,
    firstTimestamp: iso(T0),
    lastTimestamp: iso(last),
    ...overrides,
  } as KubeObject;
}

function modernEvent(seriesCount: number | undefined, last: number): KubeObject {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: 'web.2', namespace: 'shop', uid: 'e-2', resourceVersion: String(seriesCount ?? 1) },
    regarding: { apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: 'web-1', uid: 'p-1' },
    reason: 'Unhealthy',
    type: 'Warning',
    note: 'Readiness probe failed',
    reportingController: 'kubelet',
    reportingInstance: 'node-a',
    eventTime: '2026-11-24T10:00:00.000000Z',
    ...(seriesCount === undefined
      ? {}
      : { series: { count: seriesCount, lastObservedTime: iso(last).replace('Z', '000Z') } }),
  } as KubeObject;
}

const resource = { group: '', version: 'v1', resource: 'events', kind: 'Event' };

function change(
  object: KubeObject,
  previous: KubeObject | undefined,
  at: number,
  origin: ChangeEvent['origin'] = 'live',
) {
  return toChangeEvent(
    { watcher: 'events', resource, time: iso(at) },
    { type: previous === undefined ? 'added' : 'modified', object, previous, origin },
  );
}

test('both Event APIs read as the same occurrence shape', () => {
  const core = readOccurrence(coreEvent(3, T0 + 5000), coreEvent(2, T0 + 1000));
  assert.deepEqual(
    { ...core, involvedObject: undefined },
    {
      type: 'Warning',
      reason: 'BackOff',
      message: 'Back-off restarting failed container',
      count: 3,
      previousCount: 2,
      firstTime: iso(T0),
      lastTime: iso(T0 + 5000),
      component: 'kubelet',
      host: 'node-a',
      involvedObject: undefined,
      suppressed: 0,
      duplicate: false,
    },
  );
  assert.equal(core.involvedObject.kind, 'Pod');
  assert.equal(core.involvedObject.found, false);
  const modern = readOccurrence(modernEvent(4, T0 + 9000));
  assert.equal(modern.message, 'Readiness probe failed');
  assert.equal(modern.count, 4);
  assert.equal(modern.component, 'kubelet');
  assert.equal(modern.involvedObject.name, 'web-1');
  assert.equal(modern.lastTime, '2026-11-24T10:00:09.000000Z');
  assert.equal(readOccurrence(modernEvent(undefined, T0)).count, 1, 'a single Event counts once');
});

const passCases: { name: string; event: () => ChangeEvent; maxAge: number; passes: boolean }[] = [
  {
    name: 'a new Event',
    event: () => change(coreEvent(1, T0), undefined, T0 + 1000),
    maxAge: 300,
    passes: true,
  },
  {
    name: 'a count update, even with nothing else changed',
    event: () => change(coreEvent(2, T0), coreEvent(1, T0), T0 + 1000),
    maxAge: 300,
    passes: true,
  },
  {
    name: 'a series update of an events.k8s.io Event',
    event: () => change(modernEvent(3, T0 + 2000), modernEvent(2, T0 + 1000), T0 + 3000),
    maxAge: 300,
    passes: true,
  },
  {
    name: 'an update that is no new occurrence (a label added)',
    event: () =>
      change(
        coreEvent(2, T0, { metadata: { name: 'web.1', namespace: 'shop', labels: { x: 'y' } } }),
        coreEvent(2, T0),
        T0 + 1000,
      ),
    maxAge: 300,
    passes: false,
  },
  {
    name: 'an occurrence older than maxEventAgeSeconds when seen',
    event: () => change(coreEvent(1, T0), undefined, T0 + 301_000, 'restart'),
    maxAge: 300,
    passes: false,
  },
  {
    name: 'an old occurrence when the age limit is off',
    event: () => change(coreEvent(1, T0), undefined, T0 + 3_600_000, 'restart'),
    maxAge: 0,
    passes: true,
  },
];

for (const c of passCases) {
  test(`an events watcher ${c.passes ? 'delivers' : 'does not deliver'} ${c.name}`, () => {
    const feed = new EventFeed({ dedupWindowMs: 0 });
    assert.equal(occurrencePasses(feed.decorate(c.event()), { maxEventAgeSeconds: c.maxAge }), c.passes);
  });
}

test('repeats within the window are duplicates and the next delivered one counts them', () => {
  const feed = new EventFeed({ dedupWindowMs: 60_000 });
  const decorate = (count: number, at: number) =>
    feed.decorate(change(coreEvent(count, at), count === 1 ? undefined : coreEvent(count - 1, at - 1), at));
  const first = decorate(1, T0);
  const repeats = [decorate(2, T0 + 10_000), decorate(3, T0 + 20_000)];
  const after = decorate(4, T0 + 61_000);
  assert.equal(first.occurrence?.duplicate, false);
  assert.deepEqual(
    repeats.map((e) => e.occurrence?.duplicate),
    [true, true],
  );
  assert.equal(after.occurrence?.duplicate, false);
  assert.equal(after.occurrence.suppressed, 2);
  assert.equal(occurrencePasses(repeats[0] as ChangeEvent, { maxEventAgeSeconds: 0 }), false);
});

test('catch-up changes are decorated but never counted as repeats', () => {
  const feed = new EventFeed({ dedupWindowMs: 60_000 });
  const a = feed.decorate(change(coreEvent(1, T0), undefined, T0, 'restart'));
  const b = feed.decorate(change(coreEvent(1, T0), undefined, T0, 'restart'));
  assert.deepEqual([a.occurrence?.duplicate, b.occurrence?.duplicate], [false, false]);
});

test('the involved object is enriched from the cache it is given', () => {
  const enrich = (o: InvolvedObject): InvolvedObject => ({
    ...o,
    labels: { app: 'web' },
    owner: { kind: 'Deployment', name: 'web', uid: 'd-1' },
    found: true,
  });
  const feed = new EventFeed({ dedupWindowMs: 0, involved: { enrich } });
  const event = feed.decorate(change(coreEvent(1, T0), undefined, T0));
  assert.deepEqual(event.occurrence?.involvedObject.labels, { app: 'web' });
  assert.equal(event.occurrence.involvedObject.owner?.kind, 'Deployment');
});
