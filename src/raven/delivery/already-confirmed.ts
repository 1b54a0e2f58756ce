/**
 * Whether a sink already has a change, judged from what its checkpoint holds for the object: the
 * test that keeps the changes the apiserver replays after a restart from reaching a sink twice.
 *
 * It is asked when the change reaches the head of its object's queue, so every earlier change of
 * that object for that sink is settled and recorded: the checkpoint says exactly what the sink
 * last confirmed for it. A sink receives one object's changes in resourceVersion order (deletions
 * and re-creations included), so a change at or below that resourceVersion is one it has:
 *
 * | change                     | the sink confirmed              | skipped when                 |
 * | -------------------------- | ------------------------------- | ---------------------------- |
 * | added, modified            | a state or a deletion at rv R   | its resourceVersion <= R     |
 * | deleted (from the watch)   | a state or a deletion at rv R   | its resourceVersion <= R     |
 * | deleted (inferred, relist) | a deletion                      | always: it is deleted there  |
 * | deleted (either)           | nothing                         | always: nothing to delete    |
 * | added, modified            | nothing                         | never                        |
 *
 * An inferred deletion carries the last state the watcher knew, older than the sink's state
 * perhaps, so it is never compared by resourceVersion. resourceVersions that cannot be ordered
 * (see `resource-version.ts`) are skipped only when equal.
 */
import type { ChangeEvent } from '../model/change-event.js';
import type { ConfirmedState } from '../checkpoint/checkpoint-store.js';
import { compareResourceVersions } from '../model/resource-version.js';

/**
 * @example
 * // `event` modified the object at resourceVersion 105; the sink confirmed 110 already
alreadyConfirmed(event, { uid: 'u1', resourceVersion: '110', deleted: false }); // => true
 */
export function alreadyConfirmed(event: ChangeEvent, confirmed: ConfirmedState | undefined): boolean {
  if (confirmed === undefined) return event.type === 'deleted';
  if (event.type === 'deleted' && event.tombstone) return confirmed.deleted;
  const order = compareResourceVersions(event.resourceVersion, confirmed.resourceVersion);
  return order !== undefined && order <= 0;
}
