/**
 * Bringing a sink up to date from its checkpoint — at start-up when the watch could not resume
 * (`restart`: what changed while Raven was down), after a resumed watch found its resourceVersion
 * expired (`restart`, for the relisted scope), and after the sink fell past its backlog limit
 * (`resync`). Either way the sink gets, per object, one change from the state it last confirmed to
 * the state now; changes its routes or predicates filter out, and noise-only updates, travel
 * through its queue silently so that its checkpoint advances in order. A sink with no checkpoint
 * (its first run) gets a baseline, or an `added` per object when the watcher says `initial: added`.
 *
 * What is returned is records with the router's verdict; the caller adds what happens once each
 * is settled.
 */
import type { KubeObject } from '../../client/kube-object.js';
import type { ChangeEvent, ResourceId } from '../model/change-event.js';
import type { WatcherConfig } from '../config/watcher-schema.js';
import type { Logger } from '../../util/logger.js';
import { changesSince } from '../checkpoint/changes-since.js';
import type { CheckpointStore } from '../checkpoint/checkpoint-store.js';
import type { RoutedRecord } from './sink-delivery.js';
import type { Router } from '../routing/router.js';
import { buildChangeEvent } from '../model/to-change-event.js';

/** The watcher a catch-up is for (its pipeline, `pipeline/watcher-pipeline.ts`, is one). */
export interface Watched {
  readonly config: WatcherConfig;
  readonly resource: ResourceId;
  /** A change as the router and sinks see it (an events watcher adds its occurrence). */
  decorate?(event: ChangeEvent): ChangeEvent;
  /** Where the stretch in scope of the object kept for `object` started (names its deletion). */
  inScopeSince?(object: KubeObject): string | undefined;
}

export interface CatchUpContext {
  checkpoints: CheckpointStore;
  router: Router;
  diffIgnore: readonly string[];
  now: () => string;
  logger: Logger;
}

/**
 * What `sink` must receive for `objects` to catch up from its checkpoint. With `namespace`, only
 * that namespace's part of the checkpoint is compared (one scope of the watcher relisted).
 */
export function catchUpEvents(
  ctx: CatchUpContext,
  pipeline: Watched,
  sink: string,
  objects: readonly KubeObject[],
  origin: 'restart' | 'resync',
  namespace?: string,
): RoutedRecord[] {
  const watcher = pipeline.config.name;
  let entries = ctx.checkpoints.entries(watcher, sink);
  if (namespace !== undefined) entries = [...entries].filter((e) => e.key.startsWith(`${namespace}/`));
  const found = changesSince(entries, objects, {
    watcher,
    resource: pipeline.resource,
    origin,
    diffIgnore: ctx.diffIgnore,
    now: ctx.now,
    ...(pipeline.inScopeSince === undefined
      ? {}
      : { inScopeSince: (object: KubeObject) => pipeline.inScopeSince?.(object) }),
  });
  const decorate = (record: ChangeEvent): ChangeEvent => pipeline.decorate?.(record) ?? record;
  return [
    ...found.events.map(decorate).map((record) => ({ record, verdict: ctx.router.verdict(record, sink) })),
    ...found.silentUpdates.map((record) => ({ record, verdict: 'silent' as const })),
  ];
}

/**
 * A sink's start-up for one watcher, once that watcher first synced: records to enqueue (maybe
 * none). With `resumed`, the watch replays what a sink with a checkpoint missed: only a sink
 * without one (its first run) gets anything, from `objects` (the state it resumed from).
 */
export function startUpEvents(
  ctx: CatchUpContext,
  pipeline: Watched,
  sink: string,
  objects: readonly KubeObject[],
  resumed = false,
): RoutedRecord[] {
  const watcher = pipeline.config.name;
  if (ctx.checkpoints.hasCheckpoint(watcher, sink)) {
    if (resumed) return [];
    const records = catchUpEvents(ctx, pipeline, sink, objects, 'restart');
    ctx.logger.info(
      { watcher, sink, changes: records.filter((r) => r.verdict === 'deliver').length },
      'changes since the last run',
    );
    return records;
  }
  if (pipeline.config.initial === 'added' && objects.length > 0) {
    return objects.map((object) => {
      const event = buildChangeEvent(
        { watcher, resource: pipeline.resource, time: ctx.now() },
        { type: 'added', object, origin: 'restart', since: sinceOf(pipeline, object) },
      );
      const record = pipeline.decorate?.(event) ?? event;
      return { record, verdict: ctx.router.verdict(record, sink) };
    });
  }
  ctx.checkpoints.recordBaseline(watcher, sink, objects, (object) => sinceOf(pipeline, object));
  return [];
}

/** The pipeline's stretch for `object`, or (a pipeline that keeps none) its resourceVersion. */
function sinceOf(pipeline: Watched, object: KubeObject): string | undefined {
  return pipeline.inScopeSince === undefined
    ? object.metadata?.resourceVersion
    : pipeline.inScopeSince(object);
}
