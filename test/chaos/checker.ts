/**
 * The chaos run's checker: a pure function from what happened (the apiserver's history of the
 * ConfigMaps, each write's answer) and what the receiver got, to a verdict. It knows nothing of
 * processes or time; test/unit/chaos-checker.test.ts feeds it histories with a known loss,
 * duplicate, phantom, wrong type, reordering and gap notice, and asserts that it says so.
 *
 * What each watcher should deliver is derived from the history: every change of an object in
 * its namespaces, and with a label selector the changes as a watch with that selector reports
 * them (an object moving in is `added`, moving out is `deleted`). An object is its uid: the
 * incarnations of one name are different objects.
 *
 * The receiver deduplicates on the event id (`x-raven-event-id`), as receivers are told to; each
 * first copy is one processed event. Then:
 * - missing: a change no processed event stands for, unless a gap notice of its watcher (and
 *   namespace, when the notice names one) covers its resourceVersion: then it was skipped, with
 *   a notice, which is what may happen when the history was compacted while Raven was down;
 * - twice: one change processed under two ids;
 * - phantom: a processed event that stands for no change of its watcher;
 * - wrong type: a live event whose type is not the change's (`added`/`modified`/`deleted`);
 *   events that compare with a checkpoint (origin `restart`, `relist`, `resync`) speak of the
 *   difference with the last delivered state, so only `deleted` versus not is checked for them;
 * - out of order: an object's processed events not in the order of its changes;
 * - needless gap notice: a notice whose window (after `fromResourceVersion`, up to
 *   `toResourceVersion`) holds no change that was really skipped, unless it is unverifiable;
 * - unverifiable gap notice: allowed. A notice whose reason says the apiserver no longer had the
 *   history (`resume-expired`, `relist`), whose window holds no skipped change but some write to
 *   the watcher's namespaces: Raven cannot tell such a window from one in which a change of its
 *   scope was skipped (an object made and deleted, or moved into its selector and out again,
 *   unseen; a second modification of an object it relisted), so the notice is what it must say.
 *   So is one whose window holds a compaction of etcd: the history after its start is gone for
 *   everyone, and no list can show that nothing of the scope was written in it (the revisions
 *   in between may be any kind's). Any other window without a write to its namespaces is
 *   needless: the history could be had, nothing could be skipped;
 * - incomplete history: a write (or a deletion) the checker's own record lacks; the run is then
 *   inconclusive, never passed.
 */
import type { Change, ChangeType } from './etcd-history.js';

export interface WatcherScope {
  name: string;
  namespaces: readonly string[];
  /** `label=value`: the watcher sees only objects with it. */
  selector?: { label: string; value: string };
}

/** The parts of a delivered record (a change event or a gap notice) the checker reads. */
export interface Delivered {
  type: ChangeType | 'gap';
  watcher: string;
  uid?: string;
  namespace?: string;
  name?: string;
  resourceVersion?: string;
  origin?: string;
  tombstone?: boolean;
  reason?: string;
  fromResourceVersion?: string;
  toResourceVersion?: string;
}

export interface Receipt {
  /** The `x-raven-event-id` header. */
  id: string;
  body: Delivered;
  /** When it arrived (ms). */
  at: number;
  /** Which replica sent it, when known. */
  from?: string;
}

/** A write the driver made, with what the apiserver answered. */
export interface Write {
  type: ChangeType;
  uid: string;
  /** Absent for a deletion (the answer is a Status). */
  resourceVersion?: string;
}

export interface CheckInput {
  watchers: readonly WatcherScope[];
  history: readonly Change[];
  writes: readonly Write[];
  receipts: readonly Receipt[];
  /** Why the history may be incomplete (the checker's own watch failed). */
  historyError?: string;
  /** The revisions etcd was compacted at during the run (by any run on the same control plane). */
  compactions?: readonly string[];
}

export interface Expected {
  watcher: string;
  uid: string;
  namespace: string;
  name: string;
  resourceVersion: string;
  type: ChangeType;
}

export interface Finding {
  watcher: string;
  uid?: string;
  namespace?: string;
  name?: string;
  resourceVersion?: string;
  detail: string;
  ids?: string[];
}

export interface Report {
  verdict: 'PASS' | 'FAIL' | 'INCONCLUSIVE';
  counts: {
    changes: number;
    expected: number;
    requests: number;
    processed: number;
    /** Requests received again under an id already processed: allowed (at least once). */
    repeats: number;
    missing: number;
    skippedWithNotice: number;
    twice: number;
    phantoms: number;
    wrongType: number;
    outOfOrder: number;
    gapNotices: number;
    needlessGapNotices: number;
    unverifiableGapNotices: number;
    incompleteHistory: number;
  };
  missing: Finding[];
  skippedWithNotice: Finding[];
  twice: Finding[];
  phantoms: Finding[];
  wrongType: Finding[];
  outOfOrder: Finding[];
  needlessGapNotices: Finding[];
  unverifiableGapNotices: Finding[];
  incompleteHistory: Finding[];
}

/** Reasons meaning the apiserver no longer had the history Raven needed: it cannot see inside. */
const HISTORY_LOST = new Set(['resume-expired', 'relist']);

/** What each watcher should deliver, in the order of the history. */
export function expectedChanges(watchers: readonly WatcherScope[], history: readonly Change[]): Expected[] {
  const out: Expected[] = [];
  for (const w of watchers) {
    const inScope = (labels: Record<string, string> | undefined): boolean =>
      labels !== undefined && (w.selector === undefined || labels[w.selector.label] === w.selector.value);
    for (const c of history) {
      if (!w.namespaces.includes(c.namespace)) continue;
      let type: ChangeType | undefined;
      if (c.type === 'added') type = inScope(c.labels) ? 'added' : undefined;
      else if (c.type === 'deleted') type = inScope(c.labels) ? 'deleted' : undefined;
      else {
        const before = inScope(c.previousLabels ?? c.labels);
        const after = inScope(c.labels);
        type = before && after ? 'modified' : after ? 'added' : before ? 'deleted' : undefined;
      }
      if (type === undefined) continue;
      out.push({
        watcher: w.name,
        uid: c.uid,
        namespace: c.namespace,
        name: c.name,
        resourceVersion: c.resourceVersion,
        type,
      });
    }
  }
  return out;
}

const rv = (s: string | undefined): bigint => BigInt(s ?? '0');

function finding(e: Expected, detail: string, ids?: string[]): Finding {
  return {
    watcher: e.watcher,
    uid: e.uid,
    namespace: e.namespace,
    name: e.name,
    resourceVersion: e.resourceVersion,
    detail,
    ...(ids === undefined ? {} : { ids }),
  };
}

function bodyFinding(r: Receipt, detail: string): Finding {
  const b = r.body;
  return {
    watcher: b.watcher,
    ...(b.uid === undefined ? {} : { uid: b.uid }),
    ...(b.namespace === undefined ? {} : { namespace: b.namespace }),
    ...(b.name === undefined ? {} : { name: b.name }),
    ...(b.resourceVersion === undefined ? {} : { resourceVersion: b.resourceVersion }),
    detail,
    ids: [r.id],
  };
}

export function check(input: CheckInput): Report {
  const expected = expectedChanges(input.watchers, input.history);
  /** watcher/uid -> that object's expected changes, in order. */
  const byObject = new Map<string, { e: Expected; index: number; ids: string[] }[]>();
  for (const [index, e] of expected.entries()) {
    const key = `${e.watcher}/${e.uid}`;
    const list = byObject.get(key) ?? [];
    list.push({ e, index, ids: [] });
    byObject.set(key, list);
  }

  // The receiver's deduplication: the first copy of each id.
  const seen = new Set<string>();
  const processed: Receipt[] = [];
  for (const r of [...input.receipts].sort((a, b) => a.at - b.at)) {
    if (seen.has(r.id)) continue;
    seen.add(r.id);
    processed.push(r);
  }
  const gaps = processed.filter((r) => r.body.type === 'gap');
  const events = processed.filter((r) => r.body.type !== 'gap');

  const phantoms: Finding[] = [];
  const wrongType: Finding[] = [];
  const outOfOrder: Finding[] = [];
  /** watcher/uid -> index of the last change processed for it (arrival order). */
  const lastIndex = new Map<string, { index: number; id: string }>();
  for (const r of events) {
    const b = r.body;
    const key = `${b.watcher}/${b.uid ?? ''}`;
    const list = byObject.get(key) ?? [];
    const live = b.origin === undefined || b.origin === 'live';
    const match =
      b.type === 'deleted' && b.tombstone === true
        ? list.find((x) => x.e.type === 'deleted' && rv(x.e.resourceVersion) > rv(b.resourceVersion))
        : list.find((x) => x.e.resourceVersion === b.resourceVersion);
    if (match === undefined) {
      phantoms.push(bodyFinding(r, `${b.type} (origin ${b.origin ?? '?'}) of no change of this watcher`));
      continue;
    }
    match.ids.push(r.id);
    const typeOk = live ? b.type === match.e.type : (b.type === 'deleted') === (match.e.type === 'deleted');
    if (!typeOk)
      wrongType.push(
        finding(
          match.e,
          `delivered as ${b.type} (origin ${b.origin ?? '?'}), the change was ${match.e.type}`,
          [r.id],
        ),
      );
    const last = lastIndex.get(key);
    if (last !== undefined && last.index > match.index)
      outOfOrder.push(finding(match.e, `processed after a later change of the same object`, [last.id, r.id]));
    if (last === undefined || match.index > last.index) lastIndex.set(key, { index: match.index, id: r.id });
  }

  const covers = (g: Delivered, e: Expected): boolean =>
    g.watcher === e.watcher &&
    (g.namespace === undefined || g.namespace === e.namespace) &&
    (g.fromResourceVersion === undefined || rv(e.resourceVersion) > rv(g.fromResourceVersion)) &&
    (g.toResourceVersion === undefined || rv(e.resourceVersion) <= rv(g.toResourceVersion));
  const missing: Finding[] = [];
  const skipped: Finding[] = [];
  const twice: Finding[] = [];
  const usedGaps = new Set<string>();
  for (const list of byObject.values()) {
    for (const x of list) {
      if (x.ids.length > 1)
        twice.push(finding(x.e, `processed ${x.ids.length} times, under different ids`, x.ids));
      if (x.ids.length > 0) continue;
      const notices = gaps.filter((g) => covers(g.body, x.e));
      for (const g of notices) usedGaps.add(g.id);
      if (notices.length > 0)
        skipped.push(finding(x.e, `skipped, covered by ${notices.map((g) => g.id).join(', ')}`));
      else missing.push(finding(x.e, `${x.e.type} never processed, and no gap notice covers it`));
    }
  }
  const unused = gaps.filter((g) => !usedGaps.has(g.id));
  /** A write to the notice's namespaces inside its window, whatever the labels and uid. */
  const written = (g: Delivered): boolean => {
    const scope = input.watchers.find((w) => w.name === g.watcher);
    return input.history.some(
      (c) =>
        (g.namespace === undefined
          ? (scope?.namespaces.includes(c.namespace) ?? false)
          : c.namespace === g.namespace) &&
        (g.fromResourceVersion === undefined || rv(c.resourceVersion) > rv(g.fromResourceVersion)) &&
        (g.toResourceVersion === undefined || rv(c.resourceVersion) <= rv(g.toResourceVersion)),
    );
  };
  /** A compaction of etcd inside the notice's window: its history was gone for everyone. */
  const compacted = (g: Delivered): boolean =>
    (input.compactions ?? []).some(
      (c) =>
        (g.fromResourceVersion === undefined || rv(c) > rv(g.fromResourceVersion)) &&
        (g.toResourceVersion === undefined || rv(c) <= rv(g.toResourceVersion)),
    );
  const lost = (g: Delivered): boolean => HISTORY_LOST.has(g.reason ?? '') && (written(g) || compacted(g));
  const window = (g: Delivered): string =>
    `${g.reason ?? '?'}, after ${g.fromResourceVersion ?? '-'} up to ${g.toResourceVersion ?? '-'}`;
  const unverifiable = unused
    .filter((g) => lost(g.body))
    .map((g) =>
      bodyFinding(
        g,
        written(g.body)
          ? `gap notice (${window(g.body)}): no change of its scope was skipped, but its namespaces were written to while the apiserver had lost the history`
          : `gap notice (${window(g.body)}): no change of its scope was skipped, but etcd was compacted inside its window`,
      ),
    );
  const needless = unused
    .filter((g) => !lost(g.body))
    .map((g) => bodyFinding(g, `gap notice (${window(g.body)}) though no change in it was skipped`));

  const incomplete: Finding[] = [];
  const inHistory = new Set(
    input.history.map((c) => `${c.uid}@${c.type === 'deleted' ? 'deleted' : c.resourceVersion}`),
  );
  for (const w of input.writes) {
    const key = `${w.uid}@${w.type === 'deleted' ? 'deleted' : (w.resourceVersion ?? '')}`;
    if (!inHistory.has(key))
      incomplete.push({
        watcher: '-',
        uid: w.uid,
        ...(w.resourceVersion === undefined ? {} : { resourceVersion: w.resourceVersion }),
        detail: `the ${w.type} written is not in the checker's history`,
      });
  }
  if (input.historyError !== undefined) incomplete.push({ watcher: '-', detail: input.historyError });

  const counts = {
    changes: input.history.length,
    expected: expected.length,
    requests: input.receipts.length,
    processed: processed.length,
    repeats: input.receipts.length - processed.length,
    missing: missing.length,
    skippedWithNotice: skipped.length,
    twice: twice.length,
    phantoms: phantoms.length,
    wrongType: wrongType.length,
    outOfOrder: outOfOrder.length,
    gapNotices: gaps.length,
    needlessGapNotices: needless.length,
    unverifiableGapNotices: unverifiable.length,
    incompleteHistory: incomplete.length,
  };
  const failed =
    missing.length + twice.length + phantoms.length + wrongType.length + outOfOrder.length + needless.length >
    0;
  return {
    verdict: incomplete.length > 0 ? 'INCONCLUSIVE' : failed ? 'FAIL' : 'PASS',
    counts,
    missing,
    skippedWithNotice: skipped,
    twice,
    phantoms,
    wrongType,
    outOfOrder,
    needlessGapNotices: needless,
    unverifiableGapNotices: unverifiable,
    incompleteHistory: incomplete,
  };
}

/** The verdict line: the verdict, then every count that is not zero. */
export function verdictLine(report: Report): string {
  const c = report.counts;
  const parts = [
    `${c.expected} changes expected`,
    `${c.processed} processed`,
    `${c.missing} missing`,
    `${c.twice} under two ids`,
    `${c.phantoms} phantoms`,
    `${c.wrongType} wrong type`,
    `${c.outOfOrder} out of order`,
    `${c.gapNotices} gap notices (${c.needlessGapNotices} needless, ${c.unverifiableGapNotices} unverifiable, ${c.skippedWithNotice} changes skipped with one)`,
    `${c.repeats} repeats`,
  ];
  if (c.incompleteHistory > 0) parts.push(`${c.incompleteHistory} gaps in the checker's own history`);
  return `${report.verdict}: ${parts.join(', ')}`;
}
