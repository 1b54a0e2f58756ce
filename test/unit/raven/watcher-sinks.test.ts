/**
 * One watcher's side of delivery, fed with the pipeline's callbacks as arrays of changes: real
 * SinkDeliveries over scripted sinks, a memory checkpoint, a fake clock. A "restart" is a second
 * WatcherSinks over the same checkpoint with new deliveries, as after a crash.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../src/client/kube-object.js';
import type { ChangeEvent, ChangeType } from '../../../src/raven/model/change-event.js';
import type { CheckpointStore } from '../../../src/raven/checkpoint/checkpoint-store.js';
import { MemoryCheckpointStore } from '../../../src/raven/checkpoint/memory-checkpoint-store.js';
import { partName, ShardedCheckpoints } from '../../../src/raven/checkpoint/sharded-checkpoints.js';
import { watchScope } from '../../../src/raven/delivery/resume-point.js';
import { parseRavenConfig } from '../../../src/raven/config/load-raven-config.js';
import type { RavenConfig } from '../../../src/raven/config/raven-config-schema.js';
import { SinkDelivery } from '../../../src/raven/delivery/sink-delivery.js';
import type { GapNotice } from '../../../src/raven/model/gap-notice.js';
import { RavenMetrics } from '../../../src/raven/metrics/metrics.js';
import { Router } from '../../../src/raven/routing/router.js';
import { toChangeEvent } from '../../../src/raven/model/to-change-event.js';
import type { ResumeFrom } from '../../../src/raven/pipeline/watcher-pipeline.js';
import { WatcherSinks, type WatchedObjects } from '../../../src/raven/delivery/watcher-sinks.js';
import { FakeClock, flushMicrotasks } from '../../../src/testing/fake-clock.js';
import { stoppedStatus } from '../../../src/watch/watcher-events.js';
import type { Logger } from '../../../src/util/logger.js';
import { ScriptedSink } from './delivery/scripted-sink.js';

const CMS = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
const SHARDING = { field: 'uid' as const, buckets: 4 };

function cm(name: string, rv: string, v = rv, uid = `uid-${name}`): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'shop', uid, resourceVersion: rv },
    data: { v },
  } as KubeObject;
}

interface LogLine {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

function captureLogger(lines: LogLine[], bindings: Record<string, unknown> = {}): Logger {
  const at =
    (level: string) =>
    (fields: object, msg = ''): void => {
      lines.push({ level, msg, fields: { ...bindings, ...fields } });
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => captureLogger(lines, { ...bindings, ...more }),
  };
}

/** One daemon run: a WatcherSinks for the `cms` watcher, its sinks, and a view of its objects. */
class Run {
  readonly clock = new FakeClock();
  readonly config: RavenConfig;
  readonly sinks = new Map<string, ScriptedSink>();
  readonly deliveries = new Map<string, SinkDelivery>();
  readonly metrics = new RavenMetrics(() => new Map());
  readonly logs: LogLine[] = [];
  readonly objects = new Map<string, KubeObject>();
  resourceVersion: string | undefined;
  readonly watcherSinks: WatcherSinks;

  constructor(
    readonly checkpoints: CheckpointStore,
    sinks: string,
    options: { manual?: string[]; maxBacklog?: number; initial?: 'added'; sharded?: ShardedCheckpoints } = {},
  ) {
    this.config = parseRavenConfig(
      `
watchers:
  - { name: cms, resource: configmaps, namespaces: [shop], initial: ${options.initial ?? 'none'} }
sinks:
${sinks}
`,
      { file: 'raven.yaml', baseDir: '/etc/raven', homeDir: '/home/me', env: {}, defaultIdentity: 'me' },
    );
    for (const sinkConfig of this.config.sinks) {
      const sink = new ScriptedSink(sinkConfig.name, () => this.clock.now());
      if (!(options.manual ?? []).includes(sinkConfig.name)) sink.auto = (_e, call) => call.succeed();
      this.sinks.set(sinkConfig.name, sink);
      this.deliveries.set(
        sinkConfig.name,
        new SinkDelivery(sink, {
          clock: this.clock,
          random: () => 0,
          metrics: this.metrics.forSink(sinkConfig.name),
          ...(options.maxBacklog === undefined ? {} : { maxBacklog: options.maxBacklog }),
        }),
      );
    }
    const watched: WatchedObjects = {
      config: this.config.watchers[0] as RavenConfig['watchers'][number],
      resource: CMS,
      synced: true,
      objects: () => [...this.objects.values()],
      objectsIn: () => [...this.objects.values()],
      status: () => ({ ...stoppedStatus(), resourceVersion: this.resourceVersion }),
    };
    this.watcherSinks = new WatcherSinks(
      {
        router: new Router(this.config),
        deliveries: this.deliveries,
        checkpoints,
        metrics: this.metrics,
        logger: captureLogger(this.logs),
        clock: this.clock,
        diffIgnore: [],
        gapNotices: new Set(this.config.sinks.filter((s) => s.gapNotices).map((s) => s.name)),
        ...(options.sharded === undefined
          ? {}
          : {
              sharding: SHARDING,
              replayFloor: (event: ChangeEvent, sink: string) => options.sharded?.replayFloor(event, sink),
            }),
      },
      watched,
    );
  }

  /** Start as the daemon does: resumed when the checkpoint allows it; returns the resume point. */
  resume(): ResumeFrom | undefined {
    const resume = this.watcherSinks.start();
    for (const object of resume?.objects ?? [])
      this.objects.set(`shop/${object.metadata?.name ?? ''}`, object);
    this.watcherSinks.watching(['shop']);
    if (resume !== undefined) this.watcherSinks.synced(resume.objects, true);
    return resume;
  }

  /** A live change, applied to the objects as the pipeline would, and reported. */
  change(type: ChangeType, object: KubeObject, origin: 'live' | 'relist' = 'live'): ChangeEvent {
    const key = `shop/${object.metadata?.name ?? ''}`;
    const event = toChangeEvent(
      { watcher: 'cms', resource: CMS, time: new Date(this.clock.now()).toISOString() },
      {
        type,
        object,
        previous: this.objects.get(key),
        origin,
        tombstone: origin === 'relist' && type === 'deleted',
      },
    );
    if (type === 'deleted') this.objects.delete(key);
    else this.objects.set(key, object);
    this.resourceVersion = object.metadata?.resourceVersion;
    this.watcherSinks.change(event, 'shop');
    return event;
  }

  /** What a sink was handed: `type name@rv` or `gap reason`. */
  seen(sink: string): string[] {
    return (this.sinks.get(sink)?.calls ?? []).map((c) => describe(c.event));
  }

  async settle(): Promise<void> {
    await flushMicrotasks();
  }

  async metric(name: 'gaps' | 'deliveries'): Promise<string[]> {
    const values = (await this.metrics[name].get()).values;
    return values.map((v) => `${Object.values(v.labels).join(',')}=${v.value}`).sort();
  }
}

function describe(record: ChangeEvent | GapNotice): string {
  if (record.type === 'gap')
    return `gap ${record.reason} ${record.fromResourceVersion ?? '-'}..${record.toResourceVersion ?? '-'}`;
  return `${record.type} ${record.name}@${record.resourceVersion ?? '-'}${record.tombstone ? ' (tombstone)' : ''}`;
}

const TWO_SINKS = `
  - { name: a, type: stdout }
  - { name: b, type: stdout, gapNotices: true }
`;

/** First run: baseline `p@10`; live changes 11 (p), 12 (q), 13 (p); sink a confirms all, b only 11. */
async function firstRun(checkpoints: MemoryCheckpointStore): Promise<Run> {
  const run = new Run(checkpoints, TWO_SINKS, { manual: ['b'] });
  assert.equal(run.watcherSinks.start(), undefined, 'nothing to resume from: the first run lists');
  run.watcherSinks.watching(['shop']);
  run.objects.set('shop/p', cm('p', '10'));
  run.watcherSinks.scopeListed('shop', '10');
  run.watcherSinks.synced([cm('p', '10')], false);
  await run.settle();
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '10', 'the baseline is confirmed');
  run.change('modified', cm('p', '11'));
  run.change('added', cm('q', '12'));
  run.change('modified', cm('p', '13'));
  await run.settle();
  const b = run.sinks.get('b');
  assert.ok(b);
  const first = b.inFlight().find((c) => c.event.type !== 'gap' && c.event.resourceVersion === '11');
  first?.succeed();
  await run.settle();
  return run;
}

test('the confirmed resourceVersion follows what every sink settled, and bookmarks move it when idle', async () => {
  const checkpoints = new MemoryCheckpointStore();
  const run = await firstRun(checkpoints);
  assert.deepEqual(run.seen('a'), ['modified p@11', 'added q@12', 'modified p@13']);
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '11', 'b has not confirmed 12 yet');
  run.watcherSinks.progress('shop', '20');
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '11', 'a bookmark waits for 12 and 13');
  for (const call of run.sinks.get('b')?.inFlight() ?? []) call.succeed();
  await run.settle();
  for (const call of run.sinks.get('b')?.inFlight() ?? []) call.succeed();
  await run.settle();
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '20');
});

test('after a restart the watch resumes at the confirmed resourceVersion and a sink gets only what it lacks', async () => {
  const checkpoints = new MemoryCheckpointStore();
  await firstRun(checkpoints);
  const run = new Run(checkpoints, TWO_SINKS);
  const resume = run.resume();
  assert.equal(resume?.resourceVersion, '11');
  // p: a has 13, b has 11, so the watch is told 11; q: b never heard of it, so it is not known.
  assert.deepEqual(
    resume.objects.map((o) => `${o.metadata?.name ?? ''}@${o.metadata?.resourceVersion ?? ''}`),
    ['p@11'],
  );
  // The apiserver replays every change after 11.
  run.change('added', cm('q', '12'));
  run.change('modified', cm('p', '13'));
  run.change('modified', cm('p', '14'));
  await run.settle();
  assert.deepEqual(run.seen('a'), ['modified p@14'], 'a had 12 and 13 already');
  assert.deepEqual(run.seen('b'), ['added q@12', 'modified p@13', 'modified p@14']);
  assert.deepEqual(await run.metric('deliveries'), ['a,delivered=1', 'a,duplicate=2', 'b,delivered=3']);
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '14');
  assert.deepEqual(await run.metric('gaps'), [], 'a replay loses nothing');
});

test('a replayed deletion reaches the sink that still has the object and no other', async () => {
  const checkpoints = new MemoryCheckpointStore();
  const first = await firstRun(checkpoints);
  first.change('deleted', cm('q', '15'));
  await first.settle();
  const run = new Run(checkpoints, TWO_SINKS);
  run.resume();
  run.change('added', cm('q', '12'));
  run.change('modified', cm('p', '13'));
  run.change('deleted', cm('q', '15'));
  await run.settle();
  assert.deepEqual(run.seen('a'), [], 'a had all three, the deletion included');
  assert.deepEqual(run.seen('b'), ['added q@12', 'modified p@13', 'deleted q@15']);
});

test('an expired resume point is caught up from each checkpoint and reported as a gap', async () => {
  const checkpoints = new MemoryCheckpointStore();
  await firstRun(checkpoints);
  const run = new Run(checkpoints, TWO_SINKS);
  run.resume();
  await run.clock.tick(60_000);
  // The watch answered 410 and the relist found: p at 18, r created, q deleted.
  run.objects.clear();
  run.objects.set('shop/p', cm('p', '18'));
  run.objects.set('shop/r', cm('r', '19'));
  run.watcherSinks.relisted('shop', {
    resourceVersion: '20',
    from: '11',
    lastEventAt: undefined,
    atResumePoint: true,
    changes: 2,
  });
  await run.settle();
  assert.deepEqual(run.seen('a'), ['modified p@18', 'deleted q@12 (tombstone)', 'added r@19']);
  assert.deepEqual(
    [...run.seen('b')].sort(),
    ['added r@19', 'gap resume-expired 11..20', 'modified p@18'],
    'b never had q; it asked for gap notices',
  );
  const modified = run.sinks.get('b')?.calls.find((c) => c.event.type === 'modified')?.event as ChangeEvent;
  assert.deepEqual(
    modified.diff,
    [{ path: 'data.v', op: 'replace', old: '11', new: '18' }],
    'from b’s own state',
  );
  assert.equal(modified.origin, 'restart');
  assert.deepEqual(await run.metric('gaps'), ['cms,a,resume-expired=1', 'cms,b,resume-expired=1']);
  const gapLines = run.logs.filter((l) => l.level === 'warn' && l.msg.startsWith('gap'));
  assert.equal(gapLines.length, 1, 'one log line for the gap');
  assert.deepEqual(
    [
      gapLines[0]?.fields.reason,
      gapLines[0]?.fields.fromResourceVersion,
      gapLines[0]?.fields.toResourceVersion,
    ],
    ['resume-expired', '11', '20'],
  );
  const notice = run.sinks.get('b')?.calls.find((c) => c.event.type === 'gap')?.event as GapNotice;
  assert.equal(
    notice.since,
    new Date(run.clock.now() - 60_000).toISOString(),
    'since the resume point was confirmed',
  );
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '20');
});

test('a relist of a running watch is a gap, and the watermark moves past it once its results are settled', async () => {
  const checkpoints = new MemoryCheckpointStore();
  const run = new Run(checkpoints, TWO_SINKS, { manual: ['a'] });
  run.watcherSinks.start();
  run.watcherSinks.watching(['shop']);
  run.watcherSinks.scopeListed('shop', '10');
  run.watcherSinks.synced([], false);
  run.change('added', cm('p', '11'));
  await run.settle();
  run.sinks.get('a')?.inFlight()[0]?.succeed();
  await run.settle();
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '11');
  run.change('modified', cm('p', '40'), 'relist');
  run.watcherSinks.relisted('shop', {
    resourceVersion: '50',
    from: '11',
    lastEventAt: run.clock.now(),
    atResumePoint: false,
    changes: 1,
  });
  await run.settle();
  assert.deepEqual(run.seen('b'), ['added p@11', 'modified p@40', 'gap relist 11..50']);
  assert.deepEqual(await run.metric('gaps'), ['cms,a,relist=1', 'cms,b,relist=1']);
  assert.equal(
    checkpoints.confirmedVersion('cms')?.resourceVersion,
    '11',
    'a has not settled the relist yet',
  );
  run.sinks.get('a')?.inFlight()[0]?.succeed();
  await run.settle();
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '50');
  assert.deepEqual(run.seen('a'), ['added p@11', 'modified p@40'], 'a did not ask for gap notices');
});

test('a relist that finds every object as it was is no gap: no notice, no warning, and the watermark moves past it', async () => {
  const checkpoints = new MemoryCheckpointStore();
  const run = new Run(checkpoints, TWO_SINKS);
  run.watcherSinks.start();
  run.watcherSinks.watching(['shop']);
  run.watcherSinks.scopeListed('shop', '10');
  run.watcherSinks.synced([], false);
  run.change('added', cm('p', '11'));
  await run.settle();
  // The apiserver restarted; the watch answered 410 and the relist found nothing new.
  run.watcherSinks.relisted('shop', {
    resourceVersion: '50',
    from: '11',
    lastEventAt: run.clock.now(),
    atResumePoint: false,
    changes: 0,
  });
  await run.settle();
  assert.deepEqual(run.seen('b'), ['added p@11'], 'no gap notice');
  assert.deepEqual(await run.metric('gaps'), []);
  assert.deepEqual(
    run.logs.filter((l) => l.level === 'warn').map((l) => l.msg),
    [],
    'nothing to warn about',
  );
  assert.ok(run.logs.some((l) => l.level === 'info' && l.msg.includes('nothing missed')));
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '50');
});

test('an expired resume point is a gap even when every checkpoint matches the cluster: objects made and deleted meanwhile cannot be listed', async () => {
  const checkpoints = new MemoryCheckpointStore();
  const first = await firstRun(checkpoints);
  const b = first.sinks.get('b');
  for (const call of b?.inFlight() ?? []) call.succeed();
  await first.settle();
  const run = new Run(checkpoints, TWO_SINKS);
  run.resume();
  await run.clock.tick(60_000);
  // The watch answered 410; the relist shows exactly what both sinks confirmed.
  run.objects.clear();
  run.objects.set('shop/p', cm('p', '13'));
  run.objects.set('shop/q', cm('q', '12'));
  run.watcherSinks.relisted('shop', {
    resourceVersion: '20',
    from: '13',
    lastEventAt: undefined,
    atResumePoint: true,
    changes: 0,
  });
  await run.settle();
  assert.deepEqual(run.seen('a'), [], 'no change: each object is as a confirmed it');
  assert.deepEqual(run.seen('b'), ['gap resume-expired 13..20'], 'the history after 13 is gone');
  assert.deepEqual(await run.metric('gaps'), ['cms,a,resume-expired=1', 'cms,b,resume-expired=1']);
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '20');
});

test('a sink that overflowed is resynced, told of the gap, and no longer holds the watermark', async () => {
  const checkpoints = new MemoryCheckpointStore();
  const run = new Run(checkpoints, '  - { name: b, type: stdout, gapNotices: true }', {
    manual: ['b'],
    maxBacklog: 2,
  });
  run.watcherSinks.start();
  run.watcherSinks.watching(['shop']);
  run.watcherSinks.scopeListed('shop', '10');
  run.watcherSinks.synced([], false);
  for (let rv = 11; rv <= 15; rv++) run.change(rv === 11 ? 'added' : 'modified', cm('p', String(rv)));
  await run.settle();
  const b = run.deliveries.get('b');
  assert.equal(b?.state, 'overflowed');
  const sink = run.sinks.get('b');
  assert.ok(sink);
  sink.auto = (_e, call) => call.succeed();
  for (const call of sink.inFlight()) call.succeed();
  await run.settle();
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '11', 'what was dropped holds it');
  b.resync(run.watcherSinks.resync('b', run.clock.now()));
  await run.settle();
  assert.deepEqual(run.seen('b'), ['added p@11', 'modified p@15', 'gap overflow 11..15']);
  assert.deepEqual(await run.metric('gaps'), ['cms,b,overflow=1']);
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '15');
});

test('a checkpoint without a confirmed resourceVersion lists, compares, and reports no resume point', async () => {
  const checkpoints = new MemoryCheckpointStore();
  checkpoints.recordBaseline('cms', 'b', [cm('p', '10')]);
  const run = new Run(checkpoints, '  - { name: b, type: stdout, gapNotices: true }');
  assert.equal(run.watcherSinks.start(), undefined);
  run.watcherSinks.watching(['shop']);
  run.resourceVersion = '30';
  run.watcherSinks.scopeListed('shop', '30');
  run.watcherSinks.synced([cm('p', '25')], false);
  await run.settle();
  assert.deepEqual(run.seen('b'), ['modified p@25', 'gap no-resume-point -..30']);
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '30');
});

test('a sink added while resuming has its first run, and the resume point is forgotten until it is done', async () => {
  const checkpoints = new MemoryCheckpointStore();
  await firstRun(checkpoints);
  const run = new Run(
    checkpoints,
    `${TWO_SINKS}  - { name: c, type: stdout }
`,
    { manual: ['c'], initial: 'added' },
  );
  const resume = run.resume();
  assert.equal(resume?.resourceVersion, '11');
  assert.equal(checkpoints.confirmedVersion('cms'), undefined, 'a crash now must not resume: c needs a list');
  run.change('added', cm('q', '12'));
  await run.settle();
  assert.equal(checkpoints.confirmedVersion('cms'), undefined, 'c has not confirmed its first run yet');
  for (const call of run.sinks.get('c')?.inFlight() ?? []) call.succeed();
  await run.settle();
  for (const call of run.sinks.get('c')?.inFlight() ?? []) call.succeed();
  await run.settle();
  assert.deepEqual(run.seen('c'), ['added p@11', 'added q@12']);
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '12');
});

test('a sink routed again after a while is compared with the resume point, told of the gap, then replayed to', async () => {
  const checkpoints = new MemoryCheckpointStore();
  // b's checkpoint from when it was last routed from this watcher.
  checkpoints.recordBaseline('cms', 'b', [cm('p', '5'), cm('gone', '6')]);
  const first = new Run(checkpoints, '  - { name: a, type: stdout }');
  first.resume();
  first.watcherSinks.scopeListed('shop', '10');
  first.watcherSinks.synced([cm('p', '10')], false);
  first.objects.set('shop/p', cm('p', '10'));
  first.change('modified', cm('p', '11'));
  await first.settle();
  assert.deepEqual(checkpoints.confirmedVersion('cms')?.sinks, ['a']);

  const run = new Run(checkpoints, TWO_SINKS);
  const resume = run.resume();
  assert.equal(resume?.resourceVersion, '11', 'a resumes');
  run.change('modified', cm('p', '12'));
  await run.settle();
  assert.deepEqual(run.seen('a'), ['modified p@12']);
  assert.deepEqual(run.seen('b'), [
    'deleted gone@6 (tombstone)',
    'modified p@11',
    'gap no-resume-point -..11',
    'modified p@12',
  ]);
  assert.deepEqual(await run.metric('gaps'), ['cms,b,no-resume-point=1']);
  assert.equal(checkpoints.confirmedVersion('cms')?.resourceVersion, '12');
  assert.deepEqual(checkpoints.confirmedVersion('cms')?.sinks, ['a', 'b']);
});

test('sharded: replayed changes a part had confirmed are skipped, those of a part behind are delivered', async () => {
  const store = new MemoryCheckpointStore();
  const sharded = new ShardedCheckpoints(store, { ...SHARDING, owned: [0, 1] });
  const uids = Array.from({ length: 200 }, (_, i) => `uid-${i}-x`);
  const [p, r] = uids.filter((uid) => sharded.partOf(uid, 'shop') === 0);
  const s = uids.find((uid) => sharded.partOf(uid, 'shop') === 1);
  assert.ok(p !== undefined && r !== undefined && s !== undefined);
  // Part 0's owner confirmed everything up to 20: r was made at 14 and deleted at 16, and its
  // tombstone went when the confirmed resourceVersion passed it. Part 1's owner died at 12.
  const probe = new Run(new MemoryCheckpointStore(), '  - { name: a, type: stdout }');
  const scope = watchScope(probe.config.watchers[0] as RavenConfig['watchers'][number], CMS, SHARDING);
  const record = (part: number, object: KubeObject): void =>
    store.recordDelivered(
      toChangeEvent(
        { watcher: partName('cms', part), resource: CMS, time: '' },
        { type: 'added', object, previous: undefined, origin: 'live', tombstone: false },
      ),
      'a',
    );
  record(0, cm('p', '18', '18', p));
  record(1, cm('s', '10', '10', s));
  store.recordConfirmedVersion(partName('cms', 0), { resourceVersion: '20', scope, sinks: ['a'], at: 0 });
  store.recordConfirmedVersion(partName('cms', 1), { resourceVersion: '12', scope, sinks: ['a'], at: 0 });

  const run = new Run(sharded, '  - { name: a, type: stdout }', { sharded });
  assert.equal(run.resume()?.resourceVersion, '12', 'the parts resume together from the lowest');
  run.change('added', cm('r', '14', '14', r));
  run.change('modified', cm('s', '15', '15', s));
  run.change('deleted', cm('r', '16', '16', r));
  run.change('modified', cm('p', '18', '18', p));
  run.change('modified', cm('p', '21', '21', p));
  await run.settle();
  assert.deepEqual(run.seen('a'), ['modified s@15', 'modified p@21']);
  await sharded.flush();
  assert.equal(store.confirmedVersion(partName('cms', 1))?.resourceVersion, '21');
  assert.equal(store.confirmedVersion(partName('cms', 0))?.resourceVersion, '21');
});
