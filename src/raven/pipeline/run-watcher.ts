/**
 * One watcher's loop: the one place its events go from the pipeline to its sinks and taps.
 *
 * The sinks decide where the watch starts (`start()`: resumed from the confirmed resourceVersion,
 * or listed) and tell the pipeline where the checkpoint says objects' stretches in scope started
 * (`stretches()`, which name deletions); then every {@link PipelineEvent} the pipeline yields is applied to the sinks first
 * and then shown to each tap (metrics, the web view, custom handlers, the log), in order, before
 * the next one is read. It ends when the pipeline does (its signal aborted); what a sink or tap
 * throws ends it too, with that error, and stops the watch.
 */
import type { KnownStretches, PipelineEvent, ResumeFrom } from '../model/pipeline-event.js';
import type { PipelineRunOptions, WatcherPipeline } from './watcher-pipeline.js';

/** The watcher's sinks, as the loop uses them (`delivery/watcher-sinks.ts`). */
export interface WatcherSide {
  start(): ResumeFrom | undefined;
  /** After `start()`: where the checkpoint says each incarnation's stretch in scope started. */
  stretches?(): KnownStretches;
  apply(event: PipelineEvent): void;
}

/** An observer of a watcher's events: it sees each one after the sinks took it. */
export type WatcherTap = (event: PipelineEvent) => void;

export async function runWatcher(
  pipeline: Pick<WatcherPipeline, 'events'>,
  sinks: WatcherSide,
  taps: readonly WatcherTap[],
  options: PipelineRunOptions,
): Promise<void> {
  const resume = sinks.start();
  for await (const event of pipeline.events(options, resume, sinks.stretches?.())) {
    sinks.apply(event);
    for (const tap of taps) tap(event);
  }
}
