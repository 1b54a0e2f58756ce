/**
 * The watcher pipeline (`watcher-pipeline.ts`) over the scripted in-memory transport that the
 * watcher's own unit tests use, on the fake clock: what it announces, what it passes on as
 * changes, what it keeps in its store, per scope, resumed or not, and that an aborted run leaves
 * no request or timer behind.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ResolvedResource } from '../../../src/client/api-resource.js';
import type { KubeObject } from '../../../src/client/kube-object.js';
import type { ChangeEvent } from '../../../src/raven/model/change-event.js';
import { changesSince } from '../../../src/raven/checkpoint/changes-since.js';
import { entryFromEvent } from '../../../src/raven/checkpoint/checkpoint-store.js';
import { MemoryCheckpointStore } from '../../../src/raven/checkpoint/memory-checkpoint-store.js';
import { knownStretches, resumeObjects } from '../../../src/raven/delivery/resume-point.js';
import { parseRavenConfig } from '../../../src/raven/config/load-raven-config.js';
import type { WatcherConfig } from '../../../src/raven/config/watcher-schema.js';
import { WATCHER_CHANGE, type WatcherChangeMessage } from '../../../src/raven/model/diagnostics.js';
import {
  WatcherPipeline,
  type KnownStretches,
  type Relist,
  type ResumeFrom,
} from '../../../src/raven/pipeline/watcher-pipeline.js';
import type { OutageReport } from '../../../src/watch/outage-tracker.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import type { WatchTransport } from '../../../src/watch/watcher.js';
import { FakeTransport, PODS, bookmark, ev, pod, status, type Step } from '../watch/fake-transport.js';

const SECRETS: ResolvedResource = {
  ...PODS,
  resource: 'secrets',
  singular: 'secret',
  kind: 'Secret',
  shortNames: [],
};

function watcherConfig(resource: string, namespaces: string[]): WatcherConfig {
  const config = parseRavenConfig(
    `watchers:\n  - { name: w, resource: ${resource}, namespaces: [${namespaces.join(', ')}] }\n` +
      'sinks:\n  - { name: console, type: stdout }\n',
  );
  const [watcher] = config.watchers;
  assert.ok(watcher !== undefined);
  return watcher;
}

/** The end of a streaming initial list: what the watcher's first request is answered with. */
function listed(rv: string): object {
  return bookmark(rv, { 'k8s.io/initial-events-end': 'true' });
}

/** `pod()` in another namespace. */
function podIn(namespace: string, name: string, rv: string, extra: Record<string, unknown> = {}): object {
  const object = pod(name, rv, extra) as { metadata: Record<string, unknown> };
  return { ...object, metadata: { ...object.metadata, namespace } };
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

function secret(name: string, rv: string, password: string): object {
  return {
    kind: 'Secret',
    apiVersion: 'v1',
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      resourceVersion: rv,
      annotations: { [LAST_APPLIED]: JSON.stringify({ data: { password } }) },
    },
    type: 'Opaque',
    data: { password },
  };
}

type Call =
  | { kind: 'watching'; scopes: readonly string[] }
  | { kind: 'scopeListed'; scope: string; resourceVersion: string }
  | { kind: 'synced'; objects: readonly KubeObject[]; resumed: boolean }
  | { kind: 'change'; event: ChangeEvent; scope: string }
  | { kind: 'progress'; scope: string; resourceVersion: string }
  | { kind: 'relisting'; scope: string }
  | { kind: 'relisted'; scope: string; relist: Relist }
  | { kind: 'error'; error: Error }
  | { kind: 'outage'; report: OutageReport };

type Recorded = Call & { at: number };

/** A transport that sends each namespace's requests to its own script. */
function byNamespace(transports: Record<string, FakeTransport>): WatchTransport {
  return {
    stream(request) {
      const namespace = /\/namespaces\/([^/]+)\//.exec(request.path)?.[1] ?? '';
      const transport = transports[namespace];
      assert.ok(transport !== undefined, `no script for ${request.path}`);
      return transport.stream(request);
    },
  };
}

interface RunOptions {
  resume?: ResumeFrom;
  /** Where the checkpoint says incarnations' stretches in scope started. */
  known?: KnownStretches;
  diffIgnore?: string[];
  /** Called for every event, after it is recorded (a throw here is the consumer's throw). */
  hook?: (call: Call) => void;
  /** The reconnect jitter's random numbers. */
  random?: () => number;
}

/** One pipeline run: every event recorded in order, with the virtual time it came at. */
class Run {
  readonly calls: Recorded[] = [];
  /** The signal of every request the watchers made. */
  readonly signals: AbortSignal[] = [];
  /** The virtual time of every request the watchers made. */
  readonly requestedAt: number[] = [];
  readonly abort = new AbortController();
  readonly done: Promise<void>;
  ended = false;
  /** What the run rejected with, if it did. */
  failed: unknown;

  constructor(
    readonly pipeline: WatcherPipeline,
    readonly clock: FakeClock,
    transport: WatchTransport,
    options: RunOptions = {},
  ) {
    const record = (call: Call): void => {
      this.calls.push({ ...call, at: clock.now() });
      options.hook?.(call);
    };
    const spy: WatchTransport = {
      stream: (request) => {
        if (request.signal !== undefined) this.signals.push(request.signal);
        this.requestedAt.push(clock.now());
        return transport.stream(request);
      },
    };
    const runOptions = {
      transport: spy,
      clock,
      logger: silent,
      diffIgnore: options.diffIgnore ?? [],
      signal: this.abort.signal,
      ...(options.random === undefined ? {} : { random: options.random }),
    };
    const consume = async (): Promise<void> => {
      for await (const { type, ...rest } of pipeline.events(runOptions, options.resume, options.known))
        record({ kind: type, ...rest } as Call);
    };
    this.done = consume().then(
      () => {
        this.ended = true;
      },
      (error: unknown) => {
        this.ended = true;
        this.failed = error;
      },
    );
  }

  of<K extends Call['kind']>(kind: K): Extract<Recorded, { kind: K }>[] {
    return this.calls.filter((c): c is Extract<Recorded, { kind: K }> => c.kind === kind);
  }

  /** The changes passed on, as `type:name@rv:origin[:tombstone]/scope`. */
  changes(): string[] {
    return this.of('change').map(
      ({ event: e, scope }) =>
        `${e.type}:${e.name}@${e.resourceVersion ?? ''}:${e.origin}${e.tombstone ? ':tombstone' : ''}/${scope}`,
    );
  }

  summary(): string {
    return JSON.stringify(
      this.calls.map((c) => (c.kind === 'change' ? `change ${c.event.type}:${c.event.name}` : c.kind)),
    );
  }

  /** Move virtual time on, 100 ms at a time, until `condition` holds (at most 10 virtual minutes). */
  async until(condition: () => boolean): Promise<void> {
    for (let waited = 0; !condition(); waited += 100) {
      if (waited > 600_000) assert.fail(`not reached after 10 virtual minutes; calls: ${this.summary()}`);
      await this.clock.tick(100);
    }
  }

  /** Abort the run and check that it ended. */
  async stop(): Promise<void> {
    this.abort.abort(new Error('test over'));
    await this.clock.tick(1);
    assert.equal(this.ended, true, 'the stream ends once its signal aborts');
    await this.done;
    assert.equal(this.failed, undefined);
  }
}

const silent = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silent,
};

function names(objects: readonly KubeObject[]): string[] {
  return objects.map((o) => `${o.metadata?.name ?? ''}@${o.metadata?.resourceVersion ?? ''}`).sort();
}

/** A pipeline watching namespace `ns`, its requests answered by `script`. */
function start(
  script: Step[],
  options: RunOptions & { resource?: ResolvedResource } = {},
): Run & { transport: FakeTransport } {
  const clock = new FakeClock();
  const transport = new FakeTransport(script, clock);
  const resource = options.resource ?? PODS;
  const pipeline = new WatcherPipeline(watcherConfig(resource.resource, ['ns']), resource);
  return Object.assign(new Run(pipeline, clock, transport, options), { transport });
}

test('redacts a Secret once, as it enters the store: the announcement, each change and the store share one redacted copy', async () => {
  const run = start(
    [
      {
        events: [
          ev('ADDED', secret('s', '10', 'aHVudGVyMg==')),
          listed('10'),
          ev('MODIFIED', secret('s', '11', 'c3dvcmRmaXNo')),
        ],
        then: 'hang',
      },
    ],
    { resource: SECRETS },
  );
  await run.until(() => run.of('change').length === 1);
  const [synced] = run.of('synced');
  const announced = synced?.objects[0] as (KubeObject & { data: Record<string, string> }) | undefined;
  assert.ok(announced !== undefined);
  assert.match(announced.data.password ?? '', /^\[redacted\] \(12 chars, hmac [0-9a-f]{12}\)$/);
  assert.equal(announced.metadata?.annotations?.[LAST_APPLIED], undefined);

  const [change] = run.of('change');
  assert.ok(change !== undefined);
  const event = change.event;
  assert.equal(event.previous, announced, 'previous is the stored object itself, not redacted again');
  assert.equal(event.object, run.pipeline.get('ns', 's'), 'the store holds the object the change carries');
  const now = event.object as KubeObject & { data: Record<string, string> };
  assert.match(now.data.password ?? '', /^\[redacted\] \(12 chars, hmac [0-9a-f]{12}\)$/);
  assert.deepEqual(event.diff, [
    { path: 'data.password', op: 'replace', old: announced.data.password, new: now.data.password },
  ]);
  assert.notEqual(now.data.password, announced.data.password, 'a rotation shows as a new fingerprint');

  const everything = JSON.stringify([run.calls, run.pipeline.objects()]);
  for (const value of ['aHVudGVyMg==', 'c3dvcmRmaXNo'])
    assert.ok(!everything.includes(value), `${value} never leaves the pipeline`);
  await run.stop();
});

test('turns each live change into a ChangeEvent: added, modified with its previous state and diff, deleted', async () => {
  const running = pod('a', '12', {
    metadata: { name: 'a', namespace: 'ns', uid: 'uid-a', resourceVersion: '12', labels: { app: 'api' } },
    status: { phase: 'Running' },
  });
  const run = start(
    [
      {
        events: [
          ev('ADDED', pod('a', '10')),
          listed('10'),
          ev('ADDED', pod('b', '11')),
          ev('MODIFIED', running),
          ev('DELETED', pod('b', '13')),
        ],
        then: 'hang',
      },
    ],
    { diffIgnore: ['metadata.labels'] },
  );
  await run.until(() => run.of('change').length === 3);
  assert.deepEqual(
    run.calls.map((c) => c.kind),
    ['watching', 'scopeListed', 'synced', 'change', 'change', 'change'],
    'the listed object is announced, not passed on as a change',
  );
  const announced = run.of('synced')[0]?.objects[0];
  assert.deepEqual(announced, pod('a', '10'));
  assert.deepEqual(run.changes(), ['added:b@11:live/ns', 'modified:a@12:live/ns', 'deleted:b@13:live/ns']);

  const [added, modified, deleted] = run.of('change');
  assert.ok(added !== undefined && modified !== undefined && deleted !== undefined);
  assert.deepEqual(added.event, {
    id: 'w:uid-b:11',
    watcher: 'w',
    type: 'added',
    origin: 'live',
    resource: { group: '', version: 'v1', resource: 'pods', kind: 'Pod' },
    namespace: 'ns',
    name: 'b',
    uid: 'uid-b',
    resourceVersion: '11',
    object: pod('b', '11'),
    previous: undefined,
    diff: [],
    tombstone: false,
    time: new Date(added.at).toISOString(),
    inScopeSince: '11',
  });
  assert.equal(modified.event.previous, announced, 'the previous state is the one the store held');
  assert.deepEqual(modified.event.object, running);
  assert.deepEqual(
    modified.event.diff,
    [{ path: 'status.phase', op: 'add', new: 'Running' }],
    'the label change is left out (diffIgnore), and so is the resourceVersion (always)',
  );
  assert.equal(deleted.event.tombstone, false);
  assert.equal(deleted.event.previous, undefined);
  assert.deepEqual(deleted.event.object, pod('b', '13'), 'a deletion carries the state the server sent');

  assert.deepEqual(names(run.pipeline.objects()), ['a@12']);
  assert.equal(run.pipeline.get('ns', 'b'), undefined);
  await run.stop();
});

/** The tombstones a list without the checkpoint's objects gives (after an expired resume). */
function tombstones(entries: Parameters<typeof changesSince>[0]): ChangeEvent[] {
  return changesSince(entries, [], {
    watcher: 'w',
    resource: { group: '', version: 'v1', resource: 'pods', kind: 'Pod' },
    origin: 'restart',
    now: () => 'now',
  }).events;
}

test('a deletion is named by the stretch in scope it ends: a tombstone from a checkpoint holding an older state of that stretch, after an expired resume, has the live deletion’s id', async () => {
  // A label selector watch: a enters the scope at 20, changes at 21 and 22, leaves at 23.
  const checkpoints = new MemoryCheckpointStore();
  const first = start([
    {
      events: [
        listed('19'),
        ev('ADDED', pod('a', '20')),
        ev('MODIFIED', pod('a', '21', { status: { phase: 'Pending' } })),
        ev('MODIFIED', pod('a', '22', { status: { phase: 'Running' } })),
        ev('DELETED', pod('a', '23', { status: { phase: 'Running' } })),
      ],
      then: 'hang',
    },
  ]);
  await first.until(() => first.of('change').length === 4);
  const [added, confirmed, , live] = first.of('change').map((c) => c.event);
  assert.ok(added !== undefined && confirmed !== undefined && live !== undefined);
  assert.deepEqual(
    first.of('change').map((c) => `${c.event.id} since ${c.event.inScopeSince ?? '-'}`),
    ['w:uid-a:20 since 20', 'w:uid-a:21 since 20', 'w:uid-a:22 since 20', 'w:uid-a:20:deleted since 20'],
  );
  assert.equal(live.resourceVersion, '23', 'the event still carries the deletion’s own resourceVersion');
  await first.stop();

  // The sink confirmed a@21 only: the record of a@22 was lost (a SIGKILL, a deposed leader's
  // refused write), and the deletion reached the receiver but its answer never reached Raven.
  checkpoints.recordDelivered(added, 'audit');
  checkpoints.recordDelivered(confirmed, 'audit');
  checkpoints.recordConfirmedVersion('w', { resourceVersion: '21', scope: 's', sinks: ['audit'], at: 0 });
  // The next leader resumes from the checkpoint; the resume point has expired, the relist no
  // longer holds a, and the checkpoint is compared with what the pipeline holds.
  const resume = resumeObjects(checkpoints, 'w', ['audit']);
  const second = start(
    [
      { status: 410, body: status(410, 'Expired') },
      { events: [listed('30')], then: 'hang' },
    ],
    {
      resume: { resourceVersion: '21', objects: resume.objects },
      known: knownStretches(checkpoints, 'w', ['audit']),
    },
  );
  await second.until(() => second.of('relisted').length === 1);
  assert.equal(second.of('relisted')[0]?.relist.atResumePoint, true);
  const pipeline = second.pipeline;
  const [tombstone] = changesSince(checkpoints.entries('w', 'audit'), pipeline.objectsIn('ns'), {
    watcher: 'w',
    resource: confirmed.resource,
    origin: 'restart',
    now: () => 'now',
    inScopeSince: (object) => pipeline.inScopeSince(object),
  }).events;
  assert.equal(tombstone?.tombstone, true);
  assert.equal(tombstone.resourceVersion, '21', 'the tombstone carries the older state the checkpoint holds');
  assert.equal(tombstone.id, live.id, 'a receiver deduplicating on the id processes the deletion once');
  await second.stop();
});

test('an object that leaves a selector’s scope and comes back twice ends each stretch under an id of its own, which a tombstone of that stretch shares', async () => {
  const run = start([
    {
      events: [
        ev('ADDED', pod('a', '10')),
        listed('10'),
        ev('MODIFIED', pod('a', '11', { status: { phase: 'Running' } })),
        // As a label selector watch reports an object leaving it, then coming back and leaving.
        ev('DELETED', pod('a', '12')),
        ev('ADDED', pod('a', '14')),
        ev('MODIFIED', pod('a', '15', { status: { phase: 'Running' } })),
        ev('DELETED', pod('a', '16')),
        ev('ADDED', pod('a', '18')),
        ev('DELETED', pod('a', '19')),
      ],
      then: 'hang',
    },
  ]);
  await run.until(() => run.of('change').length === 7);
  const events = run.of('change').map((c) => c.event);
  assert.deepEqual(
    events.map((e) => e.id),
    [
      'w:uid-a:11',
      'w:uid-a:10:deleted',
      'w:uid-a:14',
      'w:uid-a:15',
      'w:uid-a:14:deleted',
      'w:uid-a:18',
      'w:uid-a:18:deleted',
    ],
    'the first stretch started when a was listed at 10',
  );
  const deletions = events.filter((e) => e.type === 'deleted').map((e) => e.id);
  assert.equal(new Set(deletions).size, 3, 'three stretches, three deletions, three ids');
  // The second stretch as a checkpoint holds it (at 15, or at 14 had 15 not been recorded).
  for (const state of [events[3], events[2]]) {
    assert.ok(state !== undefined);
    assert.equal(tombstones([entryFromEvent(state)])[0]?.id, 'w:uid-a:14:deleted');
  }
  assert.equal(run.pipeline.inScopeSince(pod('a', '19')), undefined, 'a deletion ends the stretch');
  await run.stop();
});

test('a name deleted and made again: each incarnation’s deletion has its own id', async () => {
  const again = (rv: string): object =>
    pod('a', rv, { metadata: { name: 'a', namespace: 'ns', uid: 'uid-a2', resourceVersion: rv } });
  const run = start([
    {
      events: [
        ev('ADDED', pod('a', '10')),
        listed('10'),
        ev('DELETED', pod('a', '11')),
        ev('ADDED', again('12')),
        ev('MODIFIED', again('13')),
        ev('DELETED', again('14')),
      ],
      then: 'hang',
    },
  ]);
  await run.until(() => run.of('change').length === 4);
  const ids = run.of('change').map((c) => c.event.id);
  assert.deepEqual(ids, ['w:uid-a:10:deleted', 'w:uid-a2:12', 'w:uid-a2:13', 'w:uid-a2:12:deleted']);
  await run.stop();
});

test('listed at the start, an object the checkpoint knows stays in the stretch the checkpoint recorded; one it does not know starts one at its listed resourceVersion', async () => {
  const run = start(
    [
      {
        events: [
          ev('ADDED', pod('a', '10')),
          ev('ADDED', pod('b', '11')),
          ev('ADDED', pod('c', '12')),
          listed('12'),
          ev('DELETED', pod('a', '13')),
          ev('DELETED', pod('b', '14')),
          ev('DELETED', pod('c', '15')),
        ],
        then: 'hang',
      },
    ],
    // b was recorded by an older Raven, without a stretch: named by the state its deletion ends.
    {
      known: new Map([
        ['uid-a', '4'],
        ['uid-b', undefined],
      ]),
    },
  );
  await run.until(() => run.of('change').length === 3);
  assert.deepEqual(
    run.of('change').map((c) => c.event.id),
    ['w:uid-a:4:deleted', 'w:uid-b:11:deleted', 'w:uid-c:12:deleted'],
  );
  await run.stop();
});

test('announces each namespace as it lists, and every object once the last one has: changes before that are not passed on', async () => {
  const clock = new FakeClock();
  const a = new FakeTransport(
    [
      {
        events: [
          ev('ADDED', podIn('a', 'a1', '10')),
          listed('10'),
          ev('ADDED', podIn('a', 'a2', '11')),
          bookmark('11'),
        ],
        then: 'end',
        endAfterMs: 60_000,
      },
      {
        events: [ev('MODIFIED', podIn('a', 'a1', '12', { status: { phase: 'Running' } })), bookmark('13')],
        then: 'hang',
      },
    ],
    clock,
  );
  const b = new FakeTransport(
    [
      { status: 503, body: status(503, 'ServiceUnavailable') },
      {
        events: [
          ev('ADDED', podIn('b', 'b1', '20')),
          listed('20'),
          ev('MODIFIED', podIn('b', 'b1', '21', { status: { phase: 'Running' } })),
        ],
        then: 'hang',
      },
    ],
    clock,
  );
  const pipeline = new WatcherPipeline(watcherConfig('pods', ['a', 'b']), PODS);
  const run = new Run(pipeline, clock, byNamespace({ a, b }));
  await run.until(() => run.of('progress').length === 1);

  assert.deepEqual(run.of('watching')[0]?.scopes, ['a', 'b']);
  assert.deepEqual(
    run.of('scopeListed').map((c) => `${c.scope}@${c.resourceVersion}`),
    ['a@10', 'b@20'],
  );
  assert.equal(run.of('error').length, 1, "b's failed first request is reported");
  const order = run.calls.map((c) => c.kind);
  assert.ok(order.indexOf('synced') > order.lastIndexOf('scopeListed'), 'synced after the last scope listed');
  const [synced] = run.of('synced');
  assert.equal(synced?.resumed, false);
  assert.deepEqual(names(synced.objects), ['a1@10', 'a2@11', 'b1@20'], 'a2 is in what is announced');
  assert.equal(pipeline.synced, true);
  assert.deepEqual(
    run.changes(),
    ['modified:b1@21:live/b', 'modified:a1@12:live/a'],
    'a2, added before every scope had listed, is not passed on as a change; each change names its scope',
  );
  assert.deepEqual(
    run.of('progress').map((c) => `${c.scope}@${c.resourceVersion}`),
    ['a@13'],
    "a's bookmark before every scope had listed is not progress; its bookmark after is",
  );
  assert.deepEqual(names(pipeline.objectsIn('a')), ['a1@12', 'a2@11']);
  assert.deepEqual(names(pipeline.objectsIn('b')), ['b1@21']);
  assert.deepEqual(names(pipeline.objectsIn('*')), ['a1@12', 'a2@11', 'b1@21']);
  await run.stop();
});

test('resumed, it lists nothing: it announces the kept objects at once and passes on what the server replays', async () => {
  const kept = pod('a', '5');
  let changesBeforeSync: number | undefined;
  let changes = 0;
  const run = start(
    [
      {
        events: [ev('MODIFIED', pod('a', '6', { status: { phase: 'Running' } })), ev('ADDED', pod('b', '7'))],
        then: 'hang',
      },
    ],
    {
      resume: { resourceVersion: '5', objects: [kept] },
      hook: (call) => {
        if (call.kind === 'change') changes++;
        if (call.kind === 'synced') changesBeforeSync = changes;
      },
    },
  );
  await run.until(() => run.calls.length >= 2);
  assert.deepEqual(
    run.calls.slice(0, 2).map((c) => c.kind),
    ['watching', 'synced'],
  );
  assert.equal(changesBeforeSync, 0, 'announced before the replayed changes are passed on');
  assert.equal(run.of('synced')[0]?.resumed, true);
  assert.equal(run.of('synced')[0]?.objects[0], kept);
  assert.equal(run.pipeline.synced, true);

  await run.until(() => run.of('change').length === 2);
  assert.equal(run.of('scopeListed').length, 0, 'a resumed scope never lists');
  assert.equal(run.transport.requests.length, 1);
  const [request] = run.transport.requests;
  assert.equal(request?.query.watch, 'true');
  assert.equal(request.query.resourceVersion, '5');
  assert.equal(request.query.sendInitialEvents, undefined, 'a plain watch, not a streaming list');
  assert.deepEqual(run.changes(), ['modified:a@6:live/ns', 'added:b@7:live/ns']);
  const modified = run.of('change')[0]?.event;
  assert.equal(modified?.previous, kept, 'the kept object is the previous state of its first change');
  assert.deepEqual(modified.diff, [{ path: 'status.phase', op: 'add', new: 'Running' }]);
  await run.stop();
});

test('resumed with two incarnations of one name, each change carries its own incarnation as previous, and the newer one stays in the store', async () => {
  const of = (uid: string, rv: string, extra: Record<string, unknown> = {}): object => {
    const p = pod('a', rv, extra) as { metadata: Record<string, unknown> };
    return { ...p, metadata: { ...p.metadata, uid } };
  };
  const older = of('old', '3');
  const newer = of('new', '20');
  const run = start(
    [
      {
        events: [
          ev('MODIFIED', of('old', '4', { status: { phase: 'Running' } })),
          ev('DELETED', of('old', '5')),
          ev('MODIFIED', of('new', '21', { status: { phase: 'Pending' } })),
        ],
        then: 'hang',
      },
    ],
    { resume: { resourceVersion: '3', objects: [newer, older] } },
  );
  await run.until(() => run.of('change').length === 3);
  assert.deepEqual(run.changes(), ['modified:a@4:live/ns', 'deleted:a@5:live/ns', 'modified:a@21:live/ns']);
  const [first, , third] = run.of('change').map((c) => c.event);
  assert.equal(first?.previous?.metadata?.uid, 'old');
  assert.deepEqual(first.diff, [{ path: 'status.phase', op: 'add', new: 'Running' }]);
  assert.equal(third?.previous?.metadata?.uid, 'new', "the old one's deletion did not remove the new one");
  assert.deepEqual(names(run.pipeline.objects()), ['a@21']);
  await run.stop();
});

test('the reconnect after a dropped stream waits a backoff jittered by the injected random numbers', async () => {
  const run = (random: number): Run & { transport: FakeTransport } =>
    start(
      [
        { events: [ev('MODIFIED', pod('a', '6'))], then: 'reset' },
        { events: [], then: 'hang' },
      ],
      { resume: { resourceVersion: '5', objects: [pod('a', '5')] }, random: () => random },
    );
  /** Virtual ms from the reset (as the change before it arrived) until the watch is asked again. */
  const reconnectsAfter = async (r: Run & { transport: FakeTransport }): Promise<number> => {
    await r.until(() => r.transport.requests.length === 2);
    assert.equal(r.transport.requests[1]?.query.resourceVersion, '6', 'resumes after the last change');
    const changedAt = r.of('change')[0]?.at ?? assert.fail('no change');
    await r.stop();
    return (r.requestedAt[1] ?? NaN) - changedAt;
  };
  const low = await reconnectsAfter(run(0));
  const high = await reconnectsAfter(run(0.999));
  // A first connection failure waits 100 ms with ±50 % jitter: 50 ms at 0, 150 at (nearly) 1.
  assert.deepEqual([low, high], [50, 150]);
});

test('a resume point that expired before anything arrived is relisted without passing changes on: relisted says atResumePoint', async () => {
  const run = start(
    [
      { status: 410, body: status(410, 'Expired') },
      { events: [ev('ADDED', pod('a', '9')), ev('ADDED', pod('c', '9')), listed('10')], then: 'hang' },
    ],
    { resume: { resourceVersion: '5', objects: [pod('a', '5'), pod('b', '5')] } },
  );
  await run.until(() => run.of('relisted').length === 1);
  // The outage's reports come before the watch event that shows them: its start before the
  // failure, its heal before the relist's answer.
  assert.deepEqual(
    run.calls.map((c) => c.kind),
    ['watching', 'synced', 'outage', 'error', 'relisting', 'outage', 'relisted'],
  );
  assert.deepEqual(run.changes(), [], 'the relist found a modified, c added and b gone: none is passed on');
  const [relisted] = run.of('relisted');
  assert.equal(relisted?.scope, 'ns');
  assert.deepEqual(relisted.relist, {
    resourceVersion: '10',
    from: '5',
    lastEventAt: undefined,
    atResumePoint: true,
    changes: 3,
  });
  assert.deepEqual(
    names(run.pipeline.objectsIn('ns')),
    ['a@9', 'c@9'],
    'the store holds what the relist found, for the daemon to compare with checkpoints',
  );
  await run.stop();
});

test('a resumed scope that heard a bookmark first relists as a running one does: changes passed on, not atResumePoint', async () => {
  const run = start(
    [
      { events: [bookmark('6')], then: 'end', endAfterMs: 1000 },
      { status: 410, body: status(410, 'Expired') },
      { events: [ev('ADDED', pod('a', '7')), listed('8')], then: 'hang' },
    ],
    { resume: { resourceVersion: '5', objects: [pod('a', '5')] } },
  );
  await run.until(() => run.of('relisted').length === 1);
  const [progress] = run.of('progress');
  assert.deepEqual(progress && [progress.scope, progress.resourceVersion], ['ns', '6']);
  assert.deepEqual(run.changes(), ['modified:a@7:relist/ns']);
  assert.equal(run.of('change')[0]?.event.previous?.metadata?.resourceVersion, '5');
  assert.deepEqual(run.of('relisted')[0]?.relist, {
    resourceVersion: '8',
    from: '6',
    lastEventAt: progress?.at,
    atResumePoint: false,
    changes: 1,
  });
  await run.stop();
});

test('a relist while running passes its results on as relist changes, tombstones from the store, and says where it came from', async () => {
  const run = start([
    {
      events: [ev('ADDED', pod('a', '10')), ev('ADDED', pod('b', '10')), listed('10')],
      then: 'end',
      endAfterMs: 40_000,
    },
    {
      events: [ev('MODIFIED', pod('a', '11', { status: { phase: 'Running' } }))],
      then: 'end',
      endAfterMs: 40_000,
    },
    { status: 410, body: status(410, 'Expired') },
    {
      events: [
        ev('ADDED', pod('a', '11', { status: { phase: 'Running' } })),
        ev('ADDED', pod('c', '12')),
        listed('12'),
      ],
      then: 'hang',
    },
  ]);
  await run.until(() => run.of('relisted').length === 1);
  const announcedB = run.of('synced')[0]?.objects.find((o) => o.metadata?.name === 'b');
  assert.deepEqual(run.changes(), [
    'modified:a@11:live/ns',
    'added:c@12:relist/ns',
    'deleted:b@10:relist:tombstone/ns',
  ]);
  const tombstone = run.of('change')[2]?.event;
  assert.equal(
    tombstone?.object,
    announcedB,
    "the tombstone carries the store's last state (the watcher, keeping no objects, knows only a stub)",
  );
  assert.deepEqual(tombstone?.object, pod('b', '10'));
  const [relisting] = run.of('relisting');
  const [relisted] = run.of('relisted');
  const live = run.of('change')[0];
  assert.ok(relisting !== undefined && relisted !== undefined && live !== undefined);
  assert.equal(relisting.scope, 'ns');
  assert.ok(live.at < relisting.at, 'the live change came well before the relist');
  assert.deepEqual(relisted.relist, {
    resourceVersion: '12',
    from: '11',
    lastEventAt: live.at,
    atResumePoint: false,
    changes: 2,
  });
  assert.ok(
    run.calls.indexOf(relisted) > run.calls.indexOf(run.of('change')[2] as Recorded),
    "relisted comes after the relist's changes",
  );
  assert.deepEqual(names(run.pipeline.objects()), ['a@11', 'c@12']);
  await run.stop();
});

test('resumed over two namespaces, only the one whose resume point expired says atResumePoint', async () => {
  const clock = new FakeClock();
  const a = new FakeTransport(
    [
      { status: 410, body: status(410, 'Expired') },
      { events: [ev('ADDED', podIn('a', 'a1', '9')), listed('10')], then: 'hang' },
    ],
    clock,
  );
  const b = new FakeTransport(
    [
      { events: [ev('MODIFIED', podIn('b', 'b1', '6'))], then: 'end', endAfterMs: 1000 },
      { status: 410, body: status(410, 'Expired') },
      {
        events: [ev('ADDED', podIn('b', 'b1', '6')), ev('ADDED', podIn('b', 'b2', '7')), listed('8')],
        then: 'hang',
      },
    ],
    clock,
  );
  const pipeline = new WatcherPipeline(watcherConfig('pods', ['a', 'b']), PODS);
  const run = new Run(pipeline, clock, byNamespace({ a, b }), {
    resume: { resourceVersion: '5', objects: [podIn('a', 'a1', '5'), podIn('b', 'b1', '5')] },
  });
  await run.until(() => run.of('relisted').length === 2);
  const relists = Object.fromEntries(run.of('relisted').map((c) => [c.scope, c.relist]));
  assert.deepEqual(relists.a, {
    resourceVersion: '10',
    from: '5',
    lastEventAt: undefined,
    atResumePoint: true,
    changes: 1,
  });
  assert.equal(relists.b?.atResumePoint, false);
  assert.equal(relists.b.from, '6');
  assert.deepEqual(
    run.changes(),
    ['modified:b1@6:live/b', 'added:b2@7:relist/b'],
    "a's relist is not passed on; b's is",
  );
  assert.deepEqual(names(pipeline.objectsIn('a')), ['a1@9']);
  await run.stop();
});

test('a scope that relists before every scope has listed is folded into the announcement: no change, no relisted', async () => {
  const clock = new FakeClock();
  const a = new FakeTransport(
    [
      { events: [ev('ADDED', podIn('a', 'a1', '10')), listed('10')], then: 'end', endAfterMs: 1000 },
      { status: 410, body: status(410, 'Expired') },
      {
        events: [ev('ADDED', podIn('a', 'a1', '12')), ev('ADDED', podIn('a', 'a2', '12')), listed('12')],
        then: 'hang',
      },
    ],
    clock,
  );
  // b's first streaming list breaks off after 5 s; its second completes.
  const b = new FakeTransport(
    [
      { events: [ev('ADDED', podIn('b', 'b1', '20'))], then: 'reset', endAfterMs: 5000 },
      { events: [ev('ADDED', podIn('b', 'b1', '20')), listed('20')], then: 'hang' },
    ],
    clock,
  );
  const pipeline = new WatcherPipeline(watcherConfig('pods', ['a', 'b']), PODS);
  const run = new Run(pipeline, clock, byNamespace({ a, b }));
  await run.until(() => run.of('synced').length === 1);
  const relisting = run.of('relisting');
  assert.deepEqual(
    relisting.map((c) => c.scope),
    ['a'],
  );
  assert.ok(relisting[0] !== undefined && relisting[0].at < (run.of('synced')[0]?.at ?? 0));
  assert.deepEqual(
    run.of('scopeListed').map((c) => `${c.scope}@${c.resourceVersion}`),
    ['a@10', 'b@20'],
  );
  assert.deepEqual(names(run.of('synced')[0]?.objects ?? []), ['a1@12', 'a2@12', 'b1@20']);
  assert.deepEqual(run.changes(), [], "a's relist, before synced, is in the announcement and not passed on");
  assert.equal(run.of('relisted').length, 0, 'relisted is only for a relist after synced');
  await run.stop();
});

test('each change is decorated once, then passed on and published on raven:watcher:change as the same object', async () => {
  const clock = new FakeClock();
  const transport = new FakeTransport(
    [{ events: [ev('ADDED', pod('a', '10')), listed('10'), ev('ADDED', pod('b', '11'))], then: 'hang' }],
    clock,
  );
  const decorated: ChangeEvent[] = [];
  const feed = {
    decorate: (event: ChangeEvent): ChangeEvent => {
      const copy = { ...event };
      decorated.push(copy);
      return copy;
    },
  };
  const published: WatcherChangeMessage[] = [];
  const onMessage = (message: unknown): void => {
    published.push(message as WatcherChangeMessage);
  };
  subscribe(WATCHER_CHANGE, onMessage);
  try {
    const pipeline = new WatcherPipeline(watcherConfig('pods', ['ns']), PODS, feed);
    const run = new Run(pipeline, clock, transport);
    await run.until(() => run.of('change').length === 1);
    assert.equal(decorated.length, 1, 'the listed object is not a change, and is not decorated');
    assert.equal(run.of('change')[0]?.event, decorated[0]);
    assert.deepEqual(published, [{ watcher: 'w', scope: 'ns', event: decorated[0] }]);
    assert.equal(published[0]?.event, decorated[0]);
    await run.stop();
  } finally {
    unsubscribe(WATCHER_CHANGE, onMessage);
  }
});

test('an aborted run returns with every request aborted, no timer left and no request after', async () => {
  const clock = new FakeClock();
  const a = new FakeTransport(
    [{ events: [ev('ADDED', podIn('a', 'a1', '10')), listed('10')], then: 'hang' }],
    clock,
  );
  // b keeps failing: when the run is aborted it is waiting to retry.
  const b = new FakeTransport(
    Array.from({ length: 20 }, () => ({ status: 503, body: status(503, 'ServiceUnavailable') })),
    clock,
  );
  const pipeline = new WatcherPipeline(watcherConfig('pods', ['a', 'b']), PODS);
  const run = new Run(pipeline, clock, byNamespace({ a, b }));
  await run.until(() => run.of('scopeListed').length === 1 && run.of('error').length >= 2);
  assert.equal(pipeline.status()?.phase, 'backoff');
  assert.ok(clock.pending > 0, 'a retry and the inactivity deadline of the open watch are scheduled');
  await run.stop();
  assert.ok(
    run.signals.every((signal) => signal.aborted),
    'no request is left open',
  );
  assert.equal(clock.pending, 0, 'no timer is left on the clock');
  assert.equal(pipeline.status()?.phase, 'stopped');
  const requests = a.requests.length + b.requests.length;
  await clock.tick(600_000);
  assert.equal(
    a.requests.length + b.requests.length,
    requests,
    'nothing is requested after the run returned',
  );
});

test('a consumer that throws ends the stream with its error, and every watch stops with it', async () => {
  const clock = new FakeClock();
  const a = new FakeTransport(
    [
      { events: [ev('ADDED', podIn('a', 'a1', '10')), listed('10')], then: 'end', endAfterMs: 1000 },
      { events: [ev('ADDED', podIn('a', 'a2', '11'))], then: 'hang' },
    ],
    clock,
  );
  // b has listed and waits on a silent watch: its next event is awaited when a's change throws.
  const b = new FakeTransport([{ events: [listed('20')], then: 'hang' }], clock);
  const boom = new Error('the sink side failed');
  const pipeline = new WatcherPipeline(watcherConfig('pods', ['a', 'b']), PODS);
  const run = new Run(pipeline, clock, byNamespace({ a, b }), {
    hook: (call) => {
      if (call.kind === 'change') throw boom;
    },
  });
  await run.until(() => run.of('change').length === 1);
  await clock.tick(1);
  assert.equal(run.ended, true, 'the stream ends at once, not when a silent watch times out');
  assert.equal(run.failed, boom);
  assert.equal(run.of('change').length, 1);
  assert.ok(
    run.signals.every((signal) => signal.aborted),
    'no request is left open',
  );
  assert.equal(clock.pending, 0, 'no timer is left on the clock');
  assert.equal(pipeline.status()?.phase, 'stopped');
});
