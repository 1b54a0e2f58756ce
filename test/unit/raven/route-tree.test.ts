import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '../../../src/client/kube-object.js';
import type { ChangeEvent } from '../../../src/raven/model/change-event.js';
import { loadRavenConfig, parseRavenConfig } from '../../../src/raven/config/load-raven-config.js';
import { EventFeed } from '../../../src/raven/events/event-feed.js';
import type { InvolvedObject } from '../../../src/raven/model/event-occurrence.js';
import { Router } from '../../../src/raven/routing/router.js';
import { routeSinks } from '../../../src/raven/routing/route-tree.js';
import { toChangeEvent } from '../../../src/raven/model/to-change-event.js';

const HEAD = `
watchers:
  - { name: ev, type: events, maxEventAgeSeconds: 0 }
  - { name: cm, resource: configmaps }
sinks:
  - { name: a, type: stdout }
  - { name: b, type: stdout }
  - { name: c, type: stdout }
`;

function routesOf(yaml: string) {
  return parseRavenConfig(`${HEAD}routes:\n${yaml}`, {
    file: 'raven.yaml',
    baseDir: '/',
    homeDir: '/',
    env: {},
    defaultIdentity: 'h',
  });
}

interface Occ {
  kind?: string;
  namespace?: string;
  reason?: string;
  type?: string;
  message?: string;
  count?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  component?: string;
}

/** A Kubernetes Event change, its involved object "cached" with the labels and annotations given. */
function occurrence(o: Occ = {}): ChangeEvent {
  const object = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'x.1', namespace: o.namespace ?? 'shop', uid: 'e', resourceVersion: '1' },
    involvedObject: { kind: o.kind ?? 'Pod', namespace: o.namespace ?? 'shop', name: 'web-1' },
    reason: o.reason ?? 'BackOff',
    type: o.type ?? 'Warning',
    message: o.message ?? 'Back-off restarting failed container',
    source: { component: o.component ?? 'kubelet' },
    count: o.count ?? 1,
    lastTimestamp: '2026-11-24T10:00:00Z',
  } as KubeObject;
  const enrich = (i: InvolvedObject): InvolvedObject => ({
    ...i,
    labels: o.labels ?? {},
    annotations: o.annotations ?? {},
    found: true,
  });
  return new EventFeed({ dedupWindowMs: 0, involved: { enrich } }).decorate(
    toChangeEvent(
      {
        watcher: 'ev',
        resource: { group: '', version: 'v1', resource: 'events', kind: 'Event' },
        time: '2026-11-24T10:00:01Z',
      },
      { type: 'added', object, origin: 'live' },
    ),
  );
}

function configMap(namespace: string, labels: Record<string, string> = {}): ChangeEvent {
  return toChangeEvent(
    {
      watcher: 'cm',
      resource: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' },
      time: 't',
    },
    { type: 'added', object: { metadata: { name: 'app', namespace, labels } }, origin: 'live' },
  );
}

const cases: { name: string; routes: string; event: ChangeEvent; sinks: string[] }[] = [
  {
    name: 'a flat route sends every change of its watchers, as before route trees',
    routes: '  - { watchers: "*", sinks: [a, b] }',
    event: configMap('shop'),
    sinks: ['a', 'b'],
  },
  {
    name: 'a match rule on reason and type selects its sinks',
    routes: '  - { watchers: ev, match: [{ reason: BackOff, type: Warning }], sinks: a }',
    event: occurrence(),
    sinks: ['a'],
  },
  {
    name: 'a match rule fails when one of its fields fails',
    routes: '  - { watchers: ev, match: [{ reason: BackOff, type: Normal }], sinks: a }',
    event: occurrence(),
    sinks: [],
  },
  {
    name: 'any one of several match rules is enough',
    routes: '  - { watchers: ev, match: [{ reason: Pulled }, { kind: [Deployment, Pod] }], sinks: a }',
    event: occurrence(),
    sinks: ['a'],
  },
  {
    name: 'a drop rule wins over a match rule',
    routes: '  - { watchers: ev, drop: [{ namespace: "*test*" }], match: [{ type: Warning }], sinks: a }',
    event: occurrence({ namespace: 'qa-test-1' }),
    sinks: [],
  },
  {
    name: 'a namespace pattern with an exclusion matches as a watcher scope does',
    routes: '  - { watchers: ev, match: [{ namespace: ["team-*", "!team-legacy"] }], sinks: a }',
    event: occurrence({ namespace: 'team-legacy' }),
    sinks: [],
  },
  {
    name: 'the message is matched by a regular expression',
    routes: '  - { watchers: ev, match: [{ message: "OOMKilled|Back-off" }], sinks: a }',
    event: occurrence(),
    sinks: ['a'],
  },
  {
    name: 'minCount waits until the Event repeated often enough',
    routes: '  - { watchers: ev, match: [{ minCount: 5 }], sinks: a }',
    event: occurrence({ count: 4 }),
    sinks: [],
  },
  {
    name: 'minCount passes at the count',
    routes: '  - { watchers: ev, match: [{ minCount: 5 }], sinks: a }',
    event: occurrence({ count: 5 }),
    sinks: ['a'],
  },
  {
    name: "labels are the involved object's, from the cache",
    routes: '  - { watchers: ev, match: [{ kind: Pod, labels: { version: dev } }], sinks: a }',
    event: occurrence({ labels: { app: 'web', version: 'dev' } }),
    sinks: ['a'],
  },
  {
    name: 'a label value list and * for any value',
    routes:
      '  - { watchers: ev, match: [{ labels: { version: [dev, qa] }, annotations: { owner: "*" } }], sinks: a }',
    event: occurrence({ labels: { version: 'qa' }, annotations: { owner: 'payments' } }),
    sinks: ['a'],
  },
  {
    name: 'an annotation that is missing fails even with *',
    routes: '  - { watchers: ev, match: [{ annotations: { owner: "*" } }], sinks: a }',
    event: occurrence(),
    sinks: [],
  },
  {
    name: 'rules on a non-Event change look at the object itself',
    routes:
      '  - { watchers: cm, match: [{ kind: ConfigMap, namespace: shop, labels: { app: web } }], sinks: a }',
    event: configMap('shop', { app: 'web' }),
    sinks: ['a'],
  },
  {
    name: 'Event-only fields never match a non-Event change',
    routes: '  - { watchers: cm, match: [{ type: Warning }], sinks: a }',
    event: configMap('shop'),
    sinks: [],
  },
  {
    name: 'children fan out by default',
    routes: `  - watchers: ev
    routes:
      - { match: [{ type: Warning }], sinks: a }
      - { match: [{ kind: Pod }], sinks: b }
      - { match: [{ kind: Node }], sinks: c }`,
    event: occurrence(),
    sinks: ['a', 'b'],
  },
  {
    name: 'select: first stops at the first child that applies',
    routes: `  - watchers: ev
    select: first
    routes:
      - { match: [{ kind: Node }], sinks: c }
      - { match: [{ type: Warning }], sinks: a }
      - { match: [{ kind: Pod }], sinks: b }`,
    event: occurrence(),
    sinks: ['a'],
  },
  {
    name: 'a child is only reached when its parent applies',
    routes: `  - watchers: ev
    drop: [{ type: Normal }]
    sinks: c
    routes:
      - { sinks: a }`,
    event: occurrence({ type: 'Normal' }),
    sinks: [],
  },
  {
    name: "a child inherits its parent's watchers",
    routes: `  - watchers: cm
    routes:
      - { sinks: a }`,
    event: occurrence(),
    sinks: [],
  },
  {
    name: 'nested levels combine: parent sinks, a first-match group, and a fan-out group',
    routes: `  - watchers: "*"
    sinks: a
    routes:
      - select: first
        routes:
          - { match: [{ reason: Pulled }], sinks: b }
          - { match: [{ type: Warning }], sinks: c }
          - { sinks: b }`,
    event: occurrence(),
    sinks: ['a', 'c'],
  },
];

for (const c of cases) {
  test(`route tree: ${c.name}`, () => {
    const config = routesOf(c.routes);
    assert.deepEqual([...routeSinks(config.routes, c.event)].sort(), c.sinks);
  });
}

test('the router delivers what the tree selects and records the rest silently', () => {
  const config = routesOf(`  - watchers: ev
    routes:
      - { match: [{ type: Warning }], sinks: a }
      - { match: [{ type: Normal }], sinks: b }`);
  const router = new Router(config);
  assert.deepEqual(router.sinksOf('ev').sort(), ['a', 'b']);
  const warning = occurrence();
  assert.deepEqual(
    ['a', 'b', 'c'].map((sink) => router.verdict(warning, sink)),
    ['deliver', 'silent', 'silent'],
  );
});

test('the kubernetes-event-exporter example routes as its comments say', async () => {
  const file = join(
    dirname(fileURLToPath(import.meta.url)),
    '../../../examples/configs/kubernetes-event-exporter.yaml',
  );
  const config = await loadRavenConfig(file, {
    env: {
      WEBHOOK_URL: 'https://q.example.com/x',
      SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/X',
    },
  });
  const sinks = (event: ChangeEvent): string[] =>
    [...routeSinks(config.routes, { ...event, watcher: 'cluster-events' })].sort();
  assert.deepEqual(sinks(occurrence({ labels: { version: 'dev' } })), [
    'critical-events-queue',
    'dump',
    'slack',
  ]);
  assert.deepEqual(sinks(occurrence({ kind: 'Node' })), ['critical-events-queue', 'dump']);
  assert.deepEqual(sinks(occurrence({ namespace: 'qa-test-2', labels: { version: 'dev' } })), [
    'dump',
    'slack',
  ]);
  assert.deepEqual(sinks(occurrence({ type: 'Normal' })), ['dump']);
});
