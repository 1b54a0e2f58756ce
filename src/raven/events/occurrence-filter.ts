/**
 * Which changes of an events watcher are delivered: new occurrences (an Event created, or its count
 * or last time moved on) that are not repeats within the de-duplication window and not older than
 * `maxEventAgeSeconds` when Raven saw them. Everything else travels silently, so checkpoints still
 * record it and a restart neither replays nor re-delivers it.
 */
import type { ChangeEvent } from '../model/change-event.js';
import { isNewOccurrence, readOccurrence, timeOf } from '../model/event-occurrence.js';

export function occurrencePasses(event: ChangeEvent, options: { maxEventAgeSeconds: number }): boolean {
  const occurrence = event.occurrence;
  if (occurrence === undefined) return event.type === 'deleted';
  if (occurrence.duplicate) return false;
  if (
    event.type === 'modified' &&
    event.previous !== undefined &&
    !isNewOccurrence(occurrence, readOccurrence(event.previous))
  )
    return false;
  if (options.maxEventAgeSeconds > 0 && occurrence.lastTime !== undefined) {
    const age = timeOf(event.time) - timeOf(occurrence.lastTime);
    if (age > options.maxEventAgeSeconds * 1000) return false;
  }
  return true;
}
