/**
 * The stage that makes an events watcher's changes occurrences: each change to an Event gets an
 * `occurrence` (one shape for both Event APIs), its involved object enriched from the shared cache,
 * and, with a de-duplication window, repeats marked `duplicate` so the router lets them travel
 * silently (still recorded in checkpoints: a restart does not bring them back). The next
 * occurrence delivered says how many repeats it stands for (`suppressed`).
 *
 * The window is measured on the changes' own times (from the injected clock), so the stage keeps
 * no timers. Memory is bounded by the occurrences seen within a few windows (a
 * count of suppressed repeats that no later repeat reports within ten windows is forgotten).
 */
import type { ChangeEvent } from '../model/change-event.js';
import { isNewOccurrence, readOccurrence, type EventOccurrence } from '../model/event-occurrence.js';
import type { InvolvedObjects } from './involved-objects.js';

export interface EventFeedOptions {
  /** Where involved objects are looked up; none: occurrences carry no labels or owner. */
  involved?: Pick<InvolvedObjects, 'enrich'> | undefined;
  /** Repeats within this many milliseconds of a delivered occurrence are marked duplicate; 0: none are. */
  dedupWindowMs: number;
}

/** How many windows a count of suppressed repeats is kept for the next repeat to report it. */
const KEEP_SUPPRESSED_WINDOWS = 10;

interface Seen {
  deliveredAt: number;
  suppressed: number;
}

export class EventFeed {
  readonly #options: EventFeedOptions;
  /** Occurrence identity → when it was last delivered; oldest first (re-inserted on delivery). */
  readonly #seen = new Map<string, Seen>();

  constructor(options: EventFeedOptions) {
    this.#options = options;
  }

  /** `event` with its occurrence. Only live and relisted changes count toward de-duplication. */
  decorate(event: ChangeEvent): ChangeEvent {
    if (event.type === 'deleted' && event.tombstone) return event;
    const base = readOccurrence(event.object, event.previous);
    const involved = this.#options.involved?.enrich(base.involvedObject) ?? base.involvedObject;
    let occurrence: EventOccurrence = { ...base, involvedObject: involved };
    const counted = event.origin === 'live' || event.origin === 'relist';
    const fresh =
      event.type === 'added' ||
      (event.type === 'modified' &&
        isNewOccurrence(
          occurrence,
          event.previous === undefined ? undefined : readOccurrence(event.previous),
        ));
    if (counted && fresh && this.#options.dedupWindowMs > 0) occurrence = this.#dedup(occurrence, event.time);
    return { ...event, occurrence };
  }

  #dedup(occurrence: EventOccurrence, time: string): EventOccurrence {
    const now = Date.parse(time);
    const window = this.#options.dedupWindowMs;
    for (const [key, seen] of this.#seen) {
      const age = now - seen.deliveredAt;
      // A count of suppressed repeats waits a while for the next repeat to report it.
      if (age < window || (seen.suppressed > 0 && age < window * KEEP_SUPPRESSED_WINDOWS)) break;
      this.#seen.delete(key);
    }
    const o = occurrence.involvedObject;
    const key = JSON.stringify([
      o.uid ?? `${o.kind}/${o.namespace ?? ''}/${o.name}`,
      occurrence.reason,
      occurrence.type,
      occurrence.message,
    ]);
    const seen = this.#seen.get(key);
    if (seen !== undefined && now - seen.deliveredAt < window) {
      seen.suppressed++;
      return { ...occurrence, duplicate: true };
    }
    this.#seen.delete(key);
    this.#seen.set(key, { deliveredAt: now, suppressed: 0 });
    return { ...occurrence, suppressed: seen?.suppressed ?? 0 };
  }
}
