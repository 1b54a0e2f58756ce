/**
 * Bringing a sink up to date from its checkpoint — at start-up (`restart`: what changed while Raven
 * was down) and after the sink fell past its backlog limit (`resync`). Either way the sink gets,
 * per object, one change from the state it last confirmed to the state now; changes its routes or
 * predicates filter out, and noise-only updates, travel through its queue silently so that its
 * checkpoint advances in order. A sink with no checkpoint (its first run) gets a baseline, or an
 * `added` per object when the watcher says `initial: added`.
 */
import type { KubeObject } from '../client/kube-object.js';
import type { Logger } from '../util/logger.js';
import type { ChangeEvent } from './change-event.js';
import { changesSince } from './checkpoint/changes-since.js';
import type { CheckpointStore } from './checkpoint/checkpoint-store.js';
import type { Router } from './router.js';
import { toChangeEvent } from './to-change-event.js';
import type { WatcherPipeline } from './watcher-pipeline.js';

export interface CatchUpContext {
  checkpoints: CheckpointStore;
  router: Router;
  /** Events a sink's queue passes without calling the sink (checkpointed only). */
  silent: WeakSet<ChangeEvent>;
  diffIgnore: readonly string[];
  now: () => string;
  logger: Logger;
}

/** What `sink` must receive for `pipeline`'s objects to catch up from its checkpoint, silent ones marked. */
export function catchUpEvents(
  ctx: CatchUpContext,
  pipeline: WatcherPipeline,
  sink: string,
  objects: readonly KubeObject[],
  origin: 'restart' | 'resync',
): ChangeEvent[] {
  const watcher = pipeline.config.name;
  const found = changesSince(ctx.checkpoints.entries(watcher, sink), objects, {
    watcher,
    resource: pipeline.resource,
    origin,
    diffIgnore: ctx.diffIgnore,
    now: ctx.now,
  });
  for (const event of found.events) if (ctx.router.verdict(event, sink) === 'silent') ctx.silent.add(event);
  for (const event of found.silentUpdates) ctx.silent.add(event);
  return [...found.events, ...found.silentUpdates];
}

/** A sink's start-up for one watcher, once that watcher first synced: events to enqueue (maybe none). */
export function startUpEvents(
  ctx: CatchUpContext,
  pipeline: WatcherPipeline,
  sink: string,
  objects: readonly KubeObject[],
): ChangeEvent[] {
  const watcher = pipeline.config.name;
  if (ctx.checkpoints.hasCheckpoint(watcher, sink)) {
    const events = catchUpEvents(ctx, pipeline, sink, objects, 'restart');
    ctx.logger.info(
      { watcher, sink, changes: events.filter((e) => !ctx.silent.has(e)).length },
      'changes since the last run',
    );
    return events;
  }
  if (pipeline.config.initial === 'added' && objects.length > 0) {
    return objects.map((object) => {
      const event = toChangeEvent(
        { watcher, resource: pipeline.resource, time: ctx.now() },
        { type: 'added', object, origin: 'restart' },
      );
      if (ctx.router.verdict(event, sink) === 'silent') ctx.silent.add(event);
      return event;
    });
  }
  ctx.checkpoints.recordBaseline(watcher, sink, objects);
  return [];
}
