/**
 * The words for who made a change, one way everywhere Raven prints it (the CLI's diff lines, the
 * web view, the text sinks): `by kubectl-client-side-apply (Update) at 10:42:07`, with the
 * subresource when the write went to one (`by kube-controller-manager (Update status) at 10:42:08`),
 * several managers joined by commas. Times are the managedFields times, in UTC, to the second.
 */
import type { ChangedBy, DiffEntry } from './change-event.js';
import { formatDiffEntries } from './diff.js';

/**
 * The lines of each diff entry (as {@link formatDiffEntries} gives them), each entry's first line
 * followed by who made that change; entries no manager is attributed to stay as they are.
 *
 * @example
 * attributedDiffEntries([{ path: 'spec.replicas', op: 'replace', old: 2, new: 3 }], [
 *   { manager: 'kubectl', operation: 'Update', time: '2026-11-28T10:42:07Z', paths: ['spec.replicas'] },
 * ]); // => [['spec.replicas: 2 → 3  by kubectl (Update) at 10:42:07']]
 */
export function attributedDiffEntries(
  diff: readonly DiffEntry[],
  changedBy: readonly ChangedBy[] | undefined,
): string[][] {
  const entries = formatDiffEntries(diff);
  if (changedBy === undefined) return entries;
  return entries.map((lines, i) => {
    const by = changedByText(changedBy, diff[i]?.path ?? '');
    return by === '' || lines.length === 0 ? lines : [`${lines[0] ?? ''}  ${by}`, ...lines.slice(1)];
  });
}

/** `by m (Op) at hh:mm:ss, …` for the managers `path` is attributed to; '' when none. */
export function changedByText(changedBy: readonly ChangedBy[] | undefined, path: string): string {
  if (changedBy === undefined) return '';
  const who = changedBy.filter((c) => c.paths.includes(path)).map(managerText);
  return who.length === 0 ? '' : `by ${who.join(', ')}`;
}

/** `m (Op) at hh:mm:ss`, or `m (Op subresource) at …`. */
export function managerText(c: ChangedBy): string {
  const operation = c.subresource === undefined ? c.operation : `${c.operation} ${c.subresource}`;
  return `${c.manager} (${operation})${c.time === undefined ? '' : ` at ${clockTime(c.time)}`}`;
}

/** `10:42:07` from `2026-11-28T10:42:07Z`; any other form as it is. */
function clockTime(time: string): string {
  return /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(time) ? time.slice(11, 19) : time;
}
