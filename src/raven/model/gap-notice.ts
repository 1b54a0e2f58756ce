/**
 * A gap notice: what a sink that opted in (`gapNotices: true`) receives when Raven knows that some
 * intermediate changes may never reach it. The end state is still delivered (every object's state
 * as of `toResourceVersion`, as `restart`, `relist` or `resync` events); what may be missing is
 * the changes in between. An audit trail records the notice so it knows where it has a hole.
 *
 * Reasons:
 * - `resume-expired`: after a restart, the resourceVersion every sink had confirmed was too old
 *   for the apiserver (410); Raven listed and compared with the checkpoint instead;
 * - `relist`: a running watch lost its place (410) and relisted;
 * - `no-resume-point`: at start there was a checkpoint but no confirmed resourceVersion to resume
 *   from (a checkpoint from an older Raven, a changed watcher scope, a crash during a first run);
 * - `overflow`: the sink fell past its backlog limit and was brought up to date from its
 *   checkpoint.
 *
 * Notices are delivered at least once like change events, but not ordered with them: they travel
 * in a queue lane of their own.
 */
import type { ChangeEvent, ResourceId } from './change-event.js';

export type GapReason = 'resume-expired' | 'relist' | 'no-resume-point' | 'overflow';

export interface GapNotice {
  type: 'gap';
  /**
   * Stable for one gap, for deduplication: `<watcher>:gap:<reason>:<from>:<to>`, and
   * `:<namespace>` for a gap of one namespace's watch (two namespaces' watches may lose their
   * places over the same resourceVersions: two gaps).
   */
  id: string;
  watcher: string;
  resource: ResourceId;
  /** The namespace whose watch relisted; undefined when the gap concerns the whole watcher. */
  namespace: string | undefined;
  reason: GapReason;
  /** Changes after this resourceVersion may be missing; undefined when Raven cannot tell. */
  fromResourceVersion: string | undefined;
  /** ... up to this one: from here on nothing is missing. Undefined when Raven cannot tell. */
  toResourceVersion: string | undefined;
  /** The start of the time window that may be missing (ISO 8601), when known. */
  since: string | undefined;
  /** When Raven noticed the gap (ISO 8601): the end of the window. */
  time: string;
  /** One sentence for people: what is missing and why. */
  message: string;
}

/** What a sink receives: a change, or a notice that changes may be missing. */
export type SinkRecord = ChangeEvent | GapNotice;

const EXPLAIN: Record<GapReason, string> = {
  'resume-expired':
    'the resourceVersion to resume from had expired while Raven was down, so it listed and delivered what differs from the checkpoint',
  relist: 'the watch lost its place (410 Expired) and relisted, delivering only what differs',
  'no-resume-point':
    'there was no confirmed resourceVersion to resume from, so Raven listed and delivered what differs from the checkpoint',
  overflow:
    'the sink fell behind its backlog limit and was brought up to date from its checkpoint, one change per object',
};

export interface GapDetails {
  watcher: string;
  resource: ResourceId;
  namespace?: string | undefined;
  reason: GapReason;
  fromResourceVersion: string | undefined;
  toResourceVersion: string | undefined;
  since: string | undefined;
  time: string;
}

/**
 * @example
 * gapNotice({ watcher: 'cms', resource, reason: 'relist', fromResourceVersion: '120',
 *   toResourceVersion: '480', since: undefined, time: new Date().toISOString() }).message;
 * // => 'changes to configmaps (watcher cms) after resourceVersion 120 up to 480 may be missing: ...'
 */
export function gapNotice(details: GapDetails): GapNotice {
  const { watcher, reason, fromResourceVersion: from, toResourceVersion: to } = details;
  const where = details.namespace === undefined ? '' : ` in namespace ${details.namespace}`;
  const range =
    from === undefined && to === undefined
      ? ''
      : from === undefined
        ? ` up to resourceVersion ${to ?? ''}`
        : to === undefined
          ? ` after resourceVersion ${from}`
          : ` after resourceVersion ${from} up to ${to}`;
  const since = details.since === undefined ? '' : ` (since ${details.since})`;
  return {
    type: 'gap',
    id: `${watcher}:gap:${reason}:${from ?? ''}:${to ?? ''}${details.namespace === undefined ? '' : `:${details.namespace}`}`,
    watcher,
    resource: details.resource,
    namespace: details.namespace,
    reason,
    fromResourceVersion: from,
    toResourceVersion: to,
    since: details.since,
    time: details.time,
    message: `changes to ${details.resource.resource}${where} (watcher ${watcher})${range}${since} may be missing: ${EXPLAIN[reason]}`,
  };
}
