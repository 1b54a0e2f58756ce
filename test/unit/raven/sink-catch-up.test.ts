/**
 * A sink brought up to date from its checkpoint (`sink-catch-up.ts`): at start-up, after an
 * expired resume point (one namespace) and after an overflow. Real pieces: the memory checkpoint
 * store, the router built from a parsed config, the change builder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../src/client/kube-object.js';
import { MemoryCheckpointStore } from '../../../src/raven/checkpoint/memory-checkpoint-store.js';
import { parseRavenConfig } from '../../../src/raven/config/load-raven-config.js';
import type { ChangeEvent } from '../../../src/raven/model/change-event.js';
import type { RoutedRecord } from '../../../src/raven/delivery/sink-delivery.js';
import { Router } from '../../../src/raven/routing/router.js';
import {
  catchUpEvents,
  startUpEvents,
  type CatchUpContext,
} from '../../../src/raven/delivery/sink-catch-up.js';
import { toChangeEvent } from '../../../src/raven/model/to-change-event.js';
import { silentLogger } from '../../../src/util/logger.js';

const PODS = { group: '', version: 'v1', resource: 'pods', kind: 'Pod' };
const NOW = '2026-01-01T00:00:00.000Z';

const CONFIG = `
watchers:
  - { name: pods, resource: pods }
  - { name: listed, resource: pods, initial: added }
sinks:
  - { name: audit, type: stdout }
  - { name: prod, type: stdout }
routes:
  - { watchers: [pods, listed], sinks: [audit] }
  - watchers: [pods, listed]
    sinks: [prod]
    match: [{ namespace: 'prod-*' }]
`;

function setup(): { ctx: CatchUpContext; watched: (name: string) => Parameters<typeof startUpEvents>[1] } {
  const config = parseRavenConfig(CONFIG, {
    baseDir: '/etc/raven',
    homeDir: '/home/me',
    env: {},
    defaultIdentity: 'me',
  });
  const ctx: CatchUpContext = {
    checkpoints: new MemoryCheckpointStore(),
    router: new Router(config),
    diffIgnore: ['metadata.managedFields'],
    now: () => NOW,
    logger: silentLogger,
  };
  const watched = (name: string): Parameters<typeof startUpEvents>[1] => {
    const watcher = config.watchers.find((w) => w.name === name);
    assert.ok(watcher, name);
    return { config: watcher, resource: PODS };
  };
  return { ctx, watched };
}

function pod(name: string, namespace: string, rv: string, image = 'web:1', managedTime = 't0'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      uid: `uid-${namespace}-${name}`,
      resourceVersion: rv,
      managedFields: [{ manager: 'kubectl', time: managedTime }],
    },
    spec: { containers: [{ name: 'web', image }] },
  } as KubeObject;
}

/** The sink confirmed `objects` for `watcher` (as if each had been delivered). */
function confirmed(ctx: CatchUpContext, watcher: string, sink: string, objects: KubeObject[]): void {
  for (const object of objects)
    ctx.checkpoints.recordDelivered(
      toChangeEvent({ watcher, resource: PODS, time: NOW }, { type: 'added', object, origin: 'live' }),
      sink,
    );
}

/** The records as changes (a catch-up never makes gap notices), with their verdicts. */
function changes(records: RoutedRecord[]): { record: ChangeEvent; verdict: string | undefined }[] {
  return records.map(({ record, verdict }) => {
    assert.ok(record.type !== 'gap', 'a catch-up makes changes, never gap notices');
    return { record, verdict };
  });
}

const summary = (records: RoutedRecord[]): string[] =>
  changes(records).map(
    ({ record, verdict }) => `${record.type} ${record.namespace ?? ''}/${record.name} ${verdict ?? ''}`,
  );

test('a sink that never ran gets no replay: the objects become its baseline', () => {
  const { ctx, watched } = setup();
  const objects = [pod('a', 'dev', '10'), pod('b', 'prod-eu', '11')];
  assert.deepEqual(startUpEvents(ctx, watched('pods'), 'audit', objects), []);
  assert.equal(ctx.checkpoints.hasCheckpoint('pods', 'audit'), true);
  assert.deepEqual(
    [...ctx.checkpoints.entries('pods', 'audit')].map((e) => [e.key, e.resourceVersion]),
    [
      ['dev/a', '10'],
      ['prod-eu/b', '11'],
    ],
  );
  // A later start compares with that baseline: nothing changed, nothing to send.
  assert.deepEqual(startUpEvents(ctx, watched('pods'), 'audit', objects), []);
});

test('with `initial: added`, a sink that never ran gets one `added` per object, with its route verdict', () => {
  const { ctx, watched } = setup();
  const objects = [pod('a', 'dev', '10'), pod('b', 'prod-eu', '11')];
  assert.deepEqual(summary(startUpEvents(ctx, watched('listed'), 'prod', objects)), [
    'added dev/a silent',
    'added prod-eu/b deliver',
  ]);
  assert.deepEqual(
    changes(startUpEvents(ctx, watched('listed'), 'prod', objects)).map(({ record }) => record.origin),
    ['restart', 'restart'],
  );
  // Nothing is recorded before delivery: the checkpoint follows what the sink confirms.
  assert.equal(ctx.checkpoints.hasCheckpoint('listed', 'prod'), false);
});

test('after a restart, a sink gets what changed while Raven was down, routed; noise-only updates are silent', () => {
  const { ctx, watched } = setup();
  const before = [
    pod('kept', 'dev', '10'),
    pod('changed', 'prod-eu', '11'),
    pod('gone', 'prod-eu', '12'),
    pod('noise', 'dev', '13'),
  ];
  confirmed(ctx, 'pods', 'prod', before);
  const now = [
    pod('kept', 'dev', '10'),
    pod('changed', 'prod-eu', '21', 'web:2'),
    pod('noise', 'dev', '23', 'web:1', 't1'),
    pod('new', 'dev', '24'),
  ];
  const records = startUpEvents(ctx, watched('pods'), 'prod', now);
  assert.deepEqual(summary(records), [
    'added dev/new silent',
    'modified prod-eu/changed deliver',
    'deleted prod-eu/gone deliver',
    'modified dev/noise silent',
  ]);
  const changed = changes(records).find(({ record }) => record.name === 'changed')?.record;
  assert.ok(changed);
  assert.equal(changed.previous?.metadata?.resourceVersion, '11');
  assert.ok(
    changed.diff.some((d) => JSON.stringify(d).includes('image')),
    JSON.stringify(changed.diff),
  );
  const gone = changes(records).find(({ record }) => record.name === 'gone')?.record;
  assert.equal(gone?.tombstone, true);
});

test('a resumed watch replays what a sink missed itself: start-up sends nothing to a sink with a checkpoint', () => {
  const { ctx, watched } = setup();
  confirmed(ctx, 'pods', 'audit', [pod('a', 'dev', '10')]);
  assert.deepEqual(startUpEvents(ctx, watched('pods'), 'audit', [pod('a', 'dev', '99', 'web:2')], true), []);
  // A sink without one still gets its baseline.
  assert.deepEqual(startUpEvents(ctx, watched('pods'), 'prod', [pod('a', 'dev', '99')], true), []);
  assert.equal(ctx.checkpoints.hasCheckpoint('pods', 'prod'), true);
});

test('a catch-up for one relisted namespace leaves the other namespaces of the checkpoint alone', () => {
  const { ctx, watched } = setup();
  confirmed(ctx, 'pods', 'audit', [pod('a', 'dev', '10'), pod('b', 'prod-eu', '11')]);
  // Only dev was relisted: prod-eu/b is not among the objects, and must not read as deleted.
  const records = catchUpEvents(
    ctx,
    watched('pods'),
    'audit',
    [pod('a', 'dev', '20', 'web:2')],
    'restart',
    'dev',
  );
  assert.deepEqual(summary(records), ['modified dev/a deliver']);
  // Without the namespace, the same call would delete b: the filter is what keeps it.
  assert.deepEqual(
    summary(catchUpEvents(ctx, watched('pods'), 'audit', [pod('a', 'dev', '20', 'web:2')], 'resync')),
    ['modified dev/a deliver', 'deleted prod-eu/b deliver'],
  );
});

test('an overflow resync carries its origin, and the pipeline decorates each record it returns', () => {
  const { ctx, watched } = setup();
  confirmed(ctx, 'pods', 'audit', [pod('a', 'dev', '10')]);
  const decorated = {
    ...watched('pods'),
    decorate: (record: ChangeEvent): ChangeEvent => ({ ...record, name: `${record.name}!` }),
  };
  const records = catchUpEvents(ctx, decorated, 'audit', [pod('a', 'dev', '11', 'web:2')], 'resync');
  assert.deepEqual(
    changes(records).map(({ record }) => [record.origin, record.name]),
    [['resync', 'a!']],
  );
});
