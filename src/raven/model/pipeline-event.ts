/**
 * What a watcher's pipeline (`pipeline/watcher-pipeline.ts`) yields: one stream of
 * {@link PipelineEvent}s per watcher, which its sinks (`delivery/watcher-sinks.ts`) apply and the
 * daemon's taps (metrics, the web view, custom handlers, the log) observe; how a scope's relist
 * went; and where a watch resumes. Here, below both, so that delivery reads them without knowing
 * the pipeline.
 */
import type { KubeObject } from '../../client/kube-object.js';
import type { OutageReport } from '../../watch/outage-tracker.js';
import type { WatcherStatus } from '../../watch/watcher-events.js';
import type { ChangeEvent } from './change-event.js';

/** What happens to one watcher, in the order it happens. */
export type PipelineEvent =
  /** The watches are planned: one scope per namespace watched, or `*` for one watch of all. */
  | { type: 'watching'; scopes: readonly string[] }
  /** A scope finished its first list at `resourceVersion` (never when resumed). */
  | { type: 'scopeListed'; scope: string; resourceVersion: string }
  /** Every scope has listed, or the pipeline resumed: `objects` is everything known now. */
  | { type: 'synced'; objects: readonly KubeObject[]; resumed: boolean }
  /** A change after `synced` (live, or a relist's result), from `scope`. */
  | { type: 'change'; event: ChangeEvent; scope: string }
  /** The server confirmed `scope` up to `resourceVersion` without a change (a bookmark). */
  | { type: 'progress'; scope: string; resourceVersion: string }
  /** `scope` lost its place and lists again. */
  | { type: 'relisting'; scope: string }
  /** A relist of `scope` completed after `synced`. */
  | { type: 'relisted'; scope: string; relist: Relist }
  /** A watch failed; the watcher retries on its own (`status` says how it stands). */
  | { type: 'error'; error: Error; status: WatcherStatus }
  /** One of an outage's few reports (a start, every 30 s, a heal), after it was logged. */
  | { type: 'outage'; report: OutageReport };

/** How a scope's relist went. */
export interface Relist {
  /** The relist's resourceVersion: every change up to it is in the objects now. */
  resourceVersion: string;
  /** The resourceVersion the scope was at when it lost its place. */
  from: string | undefined;
  /** When the scope last heard from the server before that (milliseconds since the epoch). */
  lastEventAt: number | undefined;
  /** The resumed watch expired before delivering anything; its results were not passed on. */
  atResumePoint: boolean;
  /**
   * How many changes the relist found (objects added, modified or gone since the scope lost its
   * place). None: every object is as it was, and the only changes a relist cannot see are those
   * of an object made and deleted entirely in between.
   */
  changes: number;
}

/** Where to resume: the resourceVersion to watch from and the objects known at it (redacted). */
export interface ResumeFrom {
  resourceVersion: string;
  objects: readonly KubeObject[];
}

/**
 * Where each incarnation's stretch in the watcher's scope started, as the checkpoint recorded it
 * (`CheckpointEntry.since`), by uid; undefined for an incarnation recorded without one (by an
 * older Raven). A pipeline takes an object's stretch from here when it resumes with it or lists
 * it, so that it names a deletion (`eventId`) as a tombstone made from the checkpoint would.
 */
export type KnownStretches = ReadonlyMap<string, string | undefined>;
