/**
 * One watcher's side of delivery. Every change the watcher reports goes to the sinks its routes
 * name, each with the router's verdict and a mark in the watcher's delivery watermark; what a
 * sink settles is recorded in its checkpoint and settles the mark; the watermark, as it moves, is
 * stored as the watcher's confirmed resourceVersion, in the same checkpoint flush.
 *
 * It also decides how the watcher starts: resumed from the confirmed resourceVersion (the
 * apiserver replays every change since; a change a sink already has is skipped by comparing with
 * its checkpoint), or listed and compared with each sink's checkpoint when there is nothing to
 * resume from. And it reports every gap, when intermediate changes may never reach a sink: a log
 * line, `raven_gaps_total{watcher,sink,reason}`, and a gap notice to sinks that opted in.
 *
 * Crash safety: a start-up, a relist or a resync that brings sinks up to date holds the watermark
 * until every sink settled what it was sent, so a crash in the middle starts it over. A first run
 * of a sink while resuming forgets the stored resourceVersion until it is done, so a crash then
 * lists next time (a first run needs every object, which a replay does not bring).
 */
import type { KubeObject } from '../../client/kube-object.js';
import { makeObjectKey } from '../../client/object-key.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import type { WatcherStatus } from '../../watch/watcher-events.js';
import { alreadyConfirmed } from './already-confirmed.js';
import type { ChangeEvent } from '../model/change-event.js';
import type { CheckpointStore } from '../checkpoint/checkpoint-store.js';
import { watcherGapChannel } from '../model/diagnostics.js';
import { DeliveryWatermark, type Mark } from './delivery-watermark.js';
import type { RoutedRecord, Settlement, SinkDelivery } from './sink-delivery.js';
import { gapNotice, type GapReason, type SinkRecord } from '../model/gap-notice.js';
import type { RavenMetrics } from '../metrics/metrics.js';
import { compareResourceVersions } from '../model/resource-version.js';
import { knownStretches, resumeObjects, watchScope } from './resume-point.js';
import type { Router } from '../routing/router.js';
import { catchUpEvents, startUpEvents, type CatchUpContext, type Watched } from './sink-catch-up.js';
import type { KnownStretches, PipelineEvent, Relist, ResumeFrom } from '../model/pipeline-event.js';

/** What WatcherSinks reads from the watcher's pipeline (`pipeline/watcher-pipeline.ts`). */
export interface WatchedObjects extends Watched {
  readonly synced: boolean;
  /** Current objects (redacted). */
  objects(): KubeObject[];
  /** Current objects of one scope: a namespace, or `*` for all. */
  objectsIn(scope: string): KubeObject[];
  status(): WatcherStatus | undefined;
}

export interface WatcherSinksContext {
  router: Router;
  deliveries: ReadonlyMap<string, SinkDelivery>;
  checkpoints: CheckpointStore;
  metrics: RavenMetrics;
  logger: Logger;
  clock: Clock;
  diffIgnore: readonly string[];
  /** Sinks that opted in to gap notices. */
  gapNotices: ReadonlySet<string>;
  /** Sharded replicas: how the hash space is cut, part of every watcher's scope. */
  sharding?: { field: string; buckets: number };
  /**
   * Sharded replicas: the resourceVersion up to which `sink` confirmed every change of the
   * event's part (`sharded-checkpoints.ts`); a replayed change at or below it is skipped.
   */
  replayFloor?: (event: ChangeEvent, sink: string) => string | undefined;
  /** Sharded replicas: the part an object's records are kept in (`sharded-checkpoints.ts`). */
  partOf?: (uid: string | undefined, namespace: string | undefined) => number;
}

/** Who, besides sinks, a watermark mark may wait for. */
const START_UP = 'start-up';
const CATCH_UP = 'catch-up';

interface Gap {
  reason: GapReason;
  namespace?: string | undefined;
  from: string | undefined;
  to: string | undefined;
  since: number | undefined;
  sinks: readonly string[];
}

export class WatcherSinks {
  readonly #ctx: WatcherSinksContext;
  readonly #pipeline: WatchedObjects;
  readonly #name: string;
  readonly #sinks: readonly string[];
  readonly #scope: string;
  readonly #log: Logger;
  #watermark: DeliveryWatermark | undefined;
  #resumed: { resourceVersion: string; at: number } | undefined;
  /** Replayed changes up to here may be ones a sink has (undefined: none can be). */
  #replayedUpTo: { resourceVersion: string | undefined } | undefined;
  /** Sinks with a checkpoint but nothing to resume from: their start-up is a gap. */
  #noResumePoint: { sinks: string[]; why: string; to: string | undefined } | undefined;
  readonly #startUpHolds: Mark[] = [];
  #known: KnownStretches = new Map();

  constructor(ctx: WatcherSinksContext, pipeline: WatchedObjects) {
    this.#ctx = ctx;
    this.#pipeline = pipeline;
    this.#name = pipeline.config.name;
    this.#sinks = ctx.router.sinksOf(this.#name).filter((sink) => ctx.deliveries.has(sink));
    this.#scope = watchScope(pipeline.config, pipeline.resource, ctx.sharding);
    this.#log = ctx.logger.child({ watcher: this.#name });
  }

  /**
   * How the watcher starts: from the confirmed resourceVersion and the objects known at it, or
   * (undefined) with a list. A stored resourceVersion that is not used is forgotten at once.
   */
  start(): ResumeFrom | undefined {
    const { checkpoints } = this.#ctx;
    const confirmed = checkpoints.confirmedVersion(this.#name);
    const withCheckpoint = this.#sinks.filter((sink) => checkpoints.hasCheckpoint(this.#name, sink));
    this.#known = knownStretches(checkpoints, this.#name, withCheckpoint);
    // The resume point holds for the sinks routed when it was recorded; another sink's checkpoint
    // may be older (it was routed from this watcher before, not since) and needs a comparison.
    const covered = withCheckpoint.filter((sink) => confirmed?.sinks.includes(sink) === true);
    if (confirmed !== undefined && confirmed.scope === this.#scope && covered.length > 0) {
      const known = resumeObjects(checkpoints, this.#name, covered, this.#ctx.partOf);
      const firstRuns = this.#sinks.filter((sink) => !withCheckpoint.includes(sink));
      const stale = withCheckpoint.filter((sink) => !covered.includes(sink));
      // Until those are settled a crash must list next time: a replay would not bring them up.
      if (firstRuns.length > 0 || stale.length > 0) checkpoints.forgetConfirmedVersion(this.#name);
      if (stale.length > 0)
        this.#noResumePoint = {
          sinks: stale,
          why: 'their checkpoints are older than the resume point (they were not routed from this watcher when it was recorded)',
          to: confirmed.resourceVersion,
        };
      this.#resumed = { resourceVersion: confirmed.resourceVersion, at: confirmed.at };
      // Unordered versions: every replayed change is compared; nothing confirmed: none need be.
      this.#replayedUpTo = !known.ordered
        ? { resourceVersion: undefined }
        : known.replayedUpTo === undefined
          ? undefined
          : { resourceVersion: known.replayedUpTo };
      this.#log.info(
        {
          resourceVersion: confirmed.resourceVersion,
          objects: known.objects.length,
          ...(firstRuns.length > 0 ? { firstRuns } : {}),
        },
        'resuming the watch from the confirmed resourceVersion',
      );
      return { resourceVersion: confirmed.resourceVersion, objects: known.objects };
    }
    if (confirmed !== undefined) checkpoints.forgetConfirmedVersion(this.#name);
    if (withCheckpoint.length > 0) {
      this.#noResumePoint = {
        sinks: withCheckpoint,
        why:
          confirmed === undefined
            ? 'no confirmed resourceVersion was stored'
            : confirmed.scope !== this.#scope
              ? "the watcher's resource, namespaces or selectors changed"
              : 'none of the sinks it was recorded for is routed from the watcher now',
        to: undefined,
      };
    }
    return undefined;
  }

  /**
   * After {@link WatcherSinks.start}: where the sinks' checkpoints say each incarnation's stretch in
   * scope started, for the pipeline to take when it resumes with an object or lists it.
   */
  stretches(): KnownStretches {
    return this.#known;
  }

  /** One event of the watcher's pipeline, in the order the pipeline yields them. */
  apply(event: PipelineEvent): void {
    switch (event.type) {
      case 'watching':
        this.watching(event.scopes);
        return;
      case 'scopeListed':
        this.scopeListed(event.scope, event.resourceVersion);
        return;
      case 'synced':
        this.synced(event.objects, event.resumed);
        return;
      case 'change':
        this.change(event.event, event.scope);
        return;
      case 'progress':
        this.progress(event.scope, event.resourceVersion);
        return;
      case 'relisted':
        this.relisted(event.scope, event.relist);
        return;
      case 'relisting':
      case 'error':
      case 'outage':
        // The watcher recovers on its own; what a relist changed comes as `relisted`.
        return;
    }
  }

  watching(scopes: readonly string[]): void {
    const record = this.#sinks.length > 0;
    this.#watermark = new DeliveryWatermark(scopes, {
      ...(this.#resumed === undefined ? {} : { start: this.#resumed.resourceVersion }),
      onAdvance: (resourceVersion) => {
        if (record)
          this.#ctx.checkpoints.recordConfirmedVersion(this.#name, {
            resourceVersion,
            scope: this.#scope,
            sinks: this.#sinks,
            at: this.#ctx.clock.now(),
          });
      },
    });
    // Resumed, nothing moves until the start-up (first runs of new sinks) is settled.
    if (this.#resumed !== undefined)
      for (const scope of scopes) this.#startUpHolds.push(this.#watermark.add(scope, undefined, [START_UP]));
  }

  /** A scope's first list: the watermark may move to it once the start-up is settled. */
  scopeListed(scope: string, resourceVersion: string): void {
    this.#startUpHolds.push(this.#mark().add(scope, resourceVersion, [START_UP]));
  }

  synced(objects: readonly KubeObject[], resumed: boolean): void {
    const catchUp = this.#catchUpContext();
    const items: { sink: string; routed: RoutedRecord }[] = [];
    const stale = resumed ? (this.#noResumePoint?.sinks ?? []) : [];
    for (const sink of this.#sinks) {
      // A stale sink is compared with the objects the others resume from, then gets the replay.
      const records = stale.includes(sink)
        ? catchUpEvents(catchUp, this.#pipeline, sink, objects, 'restart')
        : startUpEvents(catchUp, this.#pipeline, sink, objects, resumed);
      for (const routed of records) items.push({ sink, routed });
    }
    const missing = this.#noResumePoint;
    if (missing !== undefined) {
      this.#log.info(
        { sinks: missing.sinks, why: missing.why },
        'compared with checkpoints instead of resuming',
      );
      const gap = {
        reason: 'no-resume-point' as const,
        from: undefined,
        to: missing.to ?? this.#pipeline.status()?.resourceVersion,
        since: undefined,
        sinks: missing.sinks,
      };
      for (const notice of this.#reportGap(gap)) items.push(notice);
    }
    this.#enqueueHolding(items, this.#startUpHolds.splice(0), START_UP);
  }

  change(event: ChangeEvent, scope: string): void {
    const mark = this.#mark().add(
      scope,
      event.origin === 'relist' ? undefined : event.resourceVersion,
      this.#sinks,
    );
    for (const sink of this.#sinks) {
      const verdict = this.#ctx.router.verdict(event, sink);
      if (verdict === 'silent') this.#ctx.metrics.filtered.inc({ watcher: this.#name, sink });
      const queued = this.#ctx.deliveries.get(sink)?.enqueue(event, {
        verdict,
        settled: (how) => {
          this.#record(event, sink, how);
          this.#mark().settle(mark, sink);
        },
        ...this.#dedup(event, sink),
      });
      // Not taken (the sink overflowed): the watermark holds here until a resync covers it.
      if (queued === false) this.#mark().dropped(mark, sink);
    }
  }

  /** A bookmark: `scope` is confirmed up to `resourceVersion` once nothing before it is in flight. */
  progress(scope: string, resourceVersion: string): void {
    this.#mark().reached(scope, resourceVersion);
  }

  relisted(scope: string, relist: Relist): void {
    const namespace = scope === '*' ? undefined : scope;
    if (!relist.atResumePoint && relist.changes === 0) {
      // Every object is as it was when the watch lost its place: nothing was skipped, no gap.
      this.#log.info(
        { ...(namespace === undefined ? {} : { namespace }), from: relist.from, to: relist.resourceVersion },
        'relisted after the watch lost its place: nothing changed meanwhile, nothing missed',
      );
      this.#mark().reached(scope, relist.resourceVersion);
      return;
    }
    if (!relist.atResumePoint) {
      // The relist's results went out as changes; the notices travel beside them.
      const notices = this.#reportGap({
        reason: 'relist',
        namespace,
        from: relist.from,
        to: relist.resourceVersion,
        since: relist.lastEventAt,
        sinks: this.#sinks,
      });
      const mark = this.#mark().add(
        scope,
        undefined,
        notices.map((n) => n.sink),
      );
      for (const { sink, routed } of notices) {
        const queued = this.#ctx.deliveries.get(sink)?.enqueue(routed.record, {
          settled: () => this.#mark().settle(mark, sink),
        });
        if (queued === false) this.#mark().dropped(mark, sink);
      }
      this.#mark().reached(scope, relist.resourceVersion);
      return;
    }
    // The resume point had expired: each sink is compared with its checkpoint for this scope.
    const hold = this.#mark().add(scope, relist.resourceVersion, [CATCH_UP]);
    const catchUp = this.#catchUpContext();
    const objects = this.#pipeline.objectsIn(scope);
    const items: { sink: string; routed: RoutedRecord }[] = [];
    for (const sink of this.#sinks)
      for (const routed of catchUpEvents(catchUp, this.#pipeline, sink, objects, 'restart', namespace))
        items.push({ sink, routed });
    // Every sink may have missed something, even one whose checkpoint matches the cluster: the
    // history after the resume point is gone, and a list cannot show an object made and deleted
    // (or one that came into a selector and left it) while Raven was not watching.
    const behind = this.#sinks.filter((sink) => items.some((item) => item.sink === sink));
    if (behind.length === 0)
      this.#log.info(
        { ...(namespace === undefined ? {} : { namespace }), from: relist.from, to: relist.resourceVersion },
        'the resume point had expired; every checkpoint matches the cluster, though objects made and deleted meanwhile could not be seen',
      );
    items.push(
      ...this.#reportGap({
        reason: 'resume-expired',
        namespace,
        from: relist.from,
        to: relist.resourceVersion,
        since: this.#resumed?.at,
        sinks: this.#sinks,
      }),
    );
    this.#enqueueHolding(items, [hold], CATCH_UP);
  }

  /**
   * What `sink` needs after it overflowed: one change per object from its checkpoint to now, and
   * a gap notice if it opted in. Once all are settled the watermark stops waiting for what the
   * sink dropped. `since`: when it overflowed.
   */
  resync(sink: string, since: number | undefined): RoutedRecord[] {
    if (!this.#pipeline.synced || this.#watermark === undefined) return [];
    const upTo = this.#watermark.lastSeq;
    const records = catchUpEvents(
      this.#catchUpContext(),
      this.#pipeline,
      sink,
      this.#pipeline.objects(),
      'resync',
    );
    const items = [
      ...records.map((routed) => ({ sink, routed })),
      ...this.#reportGap({
        reason: 'overflow',
        from: this.#watermark.resourceVersion,
        to: this.#pipeline.status()?.resourceVersion,
        since,
        sinks: [sink],
      }),
    ];
    const done = countdown(items.length, () => this.#mark().coveredUpTo(sink, upTo));
    return items.map(({ routed }) => this.#settling(sink, routed, done));
  }

  #mark(): DeliveryWatermark {
    if (this.#watermark === undefined) throw new Error('the watcher reported before watching (a bug)');
    return this.#watermark;
  }

  #catchUpContext(): CatchUpContext {
    return {
      checkpoints: this.#ctx.checkpoints,
      router: this.#ctx.router,
      diffIgnore: this.#ctx.diffIgnore,
      now: () => new Date(this.#ctx.clock.now()).toISOString(),
      logger: this.#log,
    };
  }

  /**
   * Enqueue records that bring sinks up to date, holding `holds` until each sink settled all of
   * its records (or a resync covered them, if it overflowed); `holder` let go of them meanwhile.
   */
  #enqueueHolding(
    items: readonly { sink: string; routed: RoutedRecord }[],
    holds: readonly Mark[],
    holder: string,
  ): void {
    const watermark = this.#mark();
    const perSink = new Map<string, RoutedRecord[]>();
    for (const { sink, routed } of items) perSink.set(sink, [...(perSink.get(sink) ?? []), routed]);
    for (const sink of perSink.keys()) for (const hold of holds) watermark.expect(hold, sink);
    for (const hold of holds) watermark.settle(hold, holder);
    for (const [sink, records] of perSink) {
      const done = countdown(records.length, () => {
        for (const hold of holds) watermark.settle(hold, sink);
      });
      for (const routed of records) {
        const { record, ...routing } = this.#settling(sink, routed, done);
        this.#ctx.deliveries.get(sink)?.enqueue(record, routing);
      }
    }
  }

  /** `routed` with what happens when it settles: the checkpoint records it, then `then`. */
  #settling(sink: string, routed: RoutedRecord, then: () => void): RoutedRecord {
    return {
      ...routed,
      settled: (how) => {
        this.#record(routed.record, sink, how);
        then();
      },
    };
  }

  #record(record: SinkRecord, sink: string, how: Settlement): void {
    if (record.type === 'gap' || how === 'duplicate') return;
    this.#ctx.checkpoints.recordDelivered(record, sink);
  }

  /** A replayed change may be one the sink has: asked at the head of its object's queue. */
  #dedup(event: ChangeEvent, sink: string): { alreadyDelivered?: () => boolean } {
    // Sharded: the parts of a replica resume from the lowest of their resume points, so a part
    // further on is replayed changes all its sinks confirmed (an inferred deletion carries an
    // older state's resourceVersion, and is compared below).
    const floor = event.tombstone ? undefined : this.#ctx.replayFloor?.(event, sink);
    if (floor !== undefined) {
      const order = compareResourceVersions(event.resourceVersion, floor);
      if (order !== undefined && order <= 0) return { alreadyDelivered: () => true };
    }
    const bound = this.#replayedUpTo;
    if (bound === undefined) return {};
    const upTo = bound.resourceVersion;
    if (upTo !== undefined && compareResourceVersions(event.resourceVersion, upTo) === 1 && !event.tombstone)
      return {};
    const key = makeObjectKey(event.name, event.namespace);
    return {
      // By incarnation: what the sink confirmed of this object, not of another one of its name.
      alreadyDelivered: () =>
        alreadyConfirmed(event, this.#ctx.checkpoints.confirmed(this.#name, sink, key, event.uid)),
    };
  }

  /** Log a gap once, count it per sink, and return the notices for sinks that opted in. */
  #reportGap(gap: Gap): { sink: string; routed: RoutedRecord }[] {
    if (gap.sinks.length === 0) return [];
    const time = new Date(this.#ctx.clock.now()).toISOString();
    const since = gap.since === undefined ? undefined : new Date(gap.since).toISOString();
    const notice = gapNotice({
      watcher: this.#name,
      resource: this.#pipeline.resource,
      namespace: gap.namespace,
      reason: gap.reason,
      fromResourceVersion: gap.from,
      toResourceVersion: gap.to,
      since,
      time,
    });
    this.#log.warn(
      {
        reason: gap.reason,
        sinks: gap.sinks,
        ...(gap.namespace === undefined ? {} : { namespace: gap.namespace }),
        fromResourceVersion: gap.from,
        toResourceVersion: gap.to,
        since,
        detail: notice.message,
      },
      'gap: intermediate changes may be missing',
    );
    for (const sink of gap.sinks)
      this.#ctx.metrics.gaps.inc({ watcher: this.#name, sink, reason: gap.reason });
    if (watcherGapChannel.hasSubscribers)
      watcherGapChannel.publish({
        watcher: this.#name,
        reason: gap.reason,
        sinks: gap.sinks,
        namespace: gap.namespace,
        fromResourceVersion: gap.from,
        toResourceVersion: gap.to,
      });
    return gap.sinks
      .filter((sink) => this.#ctx.gapNotices.has(sink))
      .map((sink) => ({ sink, routed: { record: notice, verdict: 'deliver' as const } }));
  }
}

/** Calls `done` after `count` ticks (at once when `count` is 0). */
function countdown(count: number, done: () => void): () => void {
  let left = count;
  if (left === 0) done();
  return () => {
    if (--left === 0) done();
  };
}
