/**
 * Which changes a watcher passes on. Predicates look only at `modified` events (an object that
 * appears or disappears always matters):
 * - `generationChanged`: only when metadata.generation changed, i.e. the spec (or another
 *   generation-tracked field) changed — status and metadata-only updates are dropped;
 * - `fields`: only when one of these paths (or something below it) changed;
 * - `ignoreStatusOnly`: drop updates whose every change is under `status`.
 * A modification whose diff is empty (only noise such as resourceVersion changed) is dropped too.
 */
import type { ChangeEvent } from '../model/change-event.js';
import { touches } from '../model/diff.js';

export interface Predicates {
  generationChanged?: boolean;
  fields?: readonly string[];
  ignoreStatusOnly?: boolean;
}

/** True when the event should be delivered. */
export function passes(event: ChangeEvent, predicates: Predicates = {}): boolean {
  if (event.type !== 'modified') return true;
  if (predicates.generationChanged === true) {
    if (event.object.metadata?.generation === event.previous?.metadata?.generation) return false;
  }
  if (event.diff.length === 0) return false;
  if (
    predicates.ignoreStatusOnly === true &&
    event.diff.every(
      (d) => d.path === 'status' || d.path.startsWith('status.') || d.path.startsWith('status['),
    )
  ) {
    return false;
  }
  if (predicates.fields !== undefined && predicates.fields.length > 0) {
    return predicates.fields.some((field) => touches(event.diff, field));
  }
  return true;
}
