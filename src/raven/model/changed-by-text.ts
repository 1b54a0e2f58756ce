/**
 * The words for who made a change, one way everywhere Raven prints it (the CLI's diff lines, the
 * web view): `by kubectl-client-side-apply (Update) at 10:42:07`, with the subresource when the
 * write went to one (`by kube-controller-manager (Update status) at 10:42:08`), several managers
 * joined by commas. Times are the managedFields times, in UTC, to the second.
 */
import type { ChangedBy } from './change-event.js';

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
