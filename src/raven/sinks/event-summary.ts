/**
 * The human-readable view of a change event shared by the text sinks (stdout and chat): a one-line
 * headline and the diff as lines, cut to a size a reader (and a chat product's limits) can take.
 */
import { eventObjectKey, type ChangeEvent } from '../model/change-event.js';
import { attributedDiffEntries } from '../model/changed-by-text.js';

/** `modified Deployment default/web`, with how a deletion was learned when it was inferred. */
export function eventHeadline(event: ChangeEvent): string {
  return `${event.type} ${event.resource.kind} ${eventObjectKey(event)}${eventNote(event)}`;
}

/** ` (inferred after a relist)` for a tombstone, else empty: what the headline adds to the key. */
export function eventNote(event: ChangeEvent): string {
  if (!event.tombstone) return '';
  return ` (inferred after ${event.origin === 'restart' ? 'a restart' : 'a relist'})`;
}

/**
 * The lines a reader sees under the headline: the diff, each change followed by who made it
 * (`spec.replicas: 2 → 3  by kubectl (Update) at 10:42:07`, as the CLI prints it), or nothing for
 * adds and deletes.
 */
export function eventLines(event: ChangeEvent): string[] {
  return attributedDiffEntries(event.diff, event.changedBy).flat();
}

export interface FitOptions {
  /** Keep at most this many lines (the "… and N more" line not counted). */
  maxLines: number;
  /** Keep the joined result (with `\n` between lines) within this many characters. */
  maxChars: number;
}

/**
 * Keep as many leading lines as fit, then say how many were left out: `… and 7 more`. A single
 * line longer than the budget is cut with `…`, so the result always fits `maxChars`.
 *
 * @example
 * fitLines(['a', 'b', 'c'], { maxLines: 2, maxChars: 1000 }); // => ['a', 'b', '… and 1 more']
 */
export function fitLines(lines: readonly string[], options: FitOptions): string[] {
  const out: string[] = [];
  let used = 0;
  // Room for the trailer, so adding it never breaks the budget ("… and 99999 more").
  const reserve = 20;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const cost = line.length + (out.length > 0 ? 1 : 0);
    const isLast = i === lines.length - 1;
    const budget = options.maxChars - used - (isLast ? 0 : reserve);
    if (out.length >= options.maxLines || cost > budget) {
      if (out.length === 0 && budget > 1) {
        out.push(`${line.slice(0, budget - 1)}…`);
        i++;
      }
      const left = lines.length - i;
      if (left > 0) out.push(`… and ${left} more`);
      return out;
    }
    out.push(line);
    used += cost;
  }
  return out;
}

/** Cut `text` to `max` characters, ending with `…` when it was cut. */
export function truncateText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}
