/**
 * The low watermark of one watcher's deliveries: the resourceVersion up to which every sink has
 * confirmed every change. The daemon stores it in the checkpoint and, after a restart, resumes the
 * watch there, so the apiserver replays every change that was not confirmed yet.
 *
 * A configured watcher may be several watches (one per namespace); each is a scope. A watch
 * delivers its events in resourceVersion order, so each scope has a watermark of its own: the
 * resourceVersion of its newest mark such that it and every earlier mark are settled. The watcher's
 * watermark is the oldest of them (resourceVersions are etcd revisions, global across a resource),
 * so resuming every scope there replays whatever any scope still missed; what a sink already has
 * is skipped by comparing with its checkpoint.
 *
 * Marks, in the order the owner adds them:
 * - a change queued to some sinks: settled once by each (delivered, passed silently, skipped as
 *   already confirmed, dead-lettered); queued to no sink, it is settled at once;
 * - a relist's results come in no resourceVersion order: they are added without one, so they hold
 *   their scope without moving it; the relist's own resourceVersion follows as a mark of its own;
 * - a bookmark or a list's resourceVersion: settled at once, or waited for by the owner until the
 *   catch-up it started is confirmed.
 *
 * A sink brought up to date from its checkpoint (a resync after an overflow) never settles the
 * events it dropped: {@link DeliveryWatermark.coveredUpTo} stops every earlier mark waiting for it.
 * A change a sink would not even take (it is dropping everything until its resync) is reported
 * with {@link DeliveryWatermark.dropped}: one barrier per sink holds the watermark instead of one
 * waiting mark per change, and settled marks behind a held head are merged, so memory stays
 * bounded by what the deliveries hold, however long a receiver is down.
 */
import { compareResourceVersions } from '../model/resource-version.js';
import { RavenError } from '../../errors/raven-error.js';

/** One thing the watermark waits for. */
export interface Mark {
  /** Position among every mark of the watcher, from 1. */
  readonly seq: number;
  readonly scope: string;
  /** Undefined for a relist's result: it holds its scope without moving it. */
  readonly resourceVersion: string | undefined;
  /** Who has not settled it yet (sink names, or the owner's own names for what it waits on). */
  readonly waiting: Set<string>;
}

interface Scope {
  /** Every mark up to here is settled. */
  confirmed: string | undefined;
  marks: Mark[];
  /** Index of the first unsettled mark in `marks`. */
  head: number;
  /** Merge settled marks once this many are queued. */
  compactAt: number;
}

/** Below this many queued marks a scope is never compacted. */
const COMPACT_MIN = 1024;

export interface DeliveryWatermarkOptions {
  /** Where every scope starts (the resourceVersion a resumed watch started at); default none. */
  start?: string;
  /** Called each time the watermark moves, with its new value. */
  onAdvance?: (resourceVersion: string) => void;
}

/**
 * @example
 * let resumeFrom: string | undefined;
 * const watermark = new DeliveryWatermark(['shop', 'billing'], { onAdvance: (rv) => (resumeFrom = rv) });
 * const mark = watermark.add('shop', '120', ['audit', 'chat']);
 * watermark.reached('billing', '130'); // a bookmark
 * watermark.settle(mark, 'audit');
 * watermark.settle(mark, 'chat'); // onAdvance('120'): resumeFrom === '120'
 */
export class DeliveryWatermark {
  readonly #scopes = new Map<string, Scope>();
  readonly #onAdvance: ((resourceVersion: string) => void) | undefined;
  /** Per sink that dropped changes: the first and last `seq` it dropped and no resync covered yet. */
  readonly #dropped = new Map<string, { from: number; to: number }>();
  #seq = 0;
  #value: string | undefined;

  constructor(scopes: Iterable<string>, options: DeliveryWatermarkOptions = {}) {
    for (const scope of scopes)
      this.#scopes.set(scope, { confirmed: options.start, marks: [], head: 0, compactAt: COMPACT_MIN });
    if (this.#scopes.size === 0)
      throw new RavenError('ERR_INVALID_ARGUMENT', 'a watermark needs at least one scope');
    this.#onAdvance = options.onAdvance;
    this.#value = this.#lowest();
  }

  /** The resourceVersion every scope has confirmed; undefined until each has one (or they cannot be ordered). */
  get resourceVersion(): string | undefined {
    return this.#value;
  }

  /** The last mark's `seq` (0 before the first). */
  get lastSeq(): number {
    return this.#seq;
  }

  /** Marks not settled yet, and those held behind them. */
  get pending(): number {
    let n = 0;
    for (const scope of this.#scopes.values()) n += scope.marks.length - scope.head;
    return n;
  }

  /** A change from `scope` that each of `waitFor` will settle; settled at once when there is none. */
  add(scope: string, resourceVersion: string | undefined, waitFor: Iterable<string>): Mark {
    const state = this.#scope(scope);
    const mark: Mark = { seq: ++this.#seq, scope, resourceVersion, waiting: new Set(waitFor) };
    state.marks.push(mark);
    if (mark.waiting.size === 0) this.#advance(state);
    return mark;
  }

  /** The server confirmed `scope` up to `resourceVersion` (a bookmark, or a list's resourceVersion). */
  reached(scope: string, resourceVersion: string): void {
    this.add(scope, resourceVersion, []);
  }

  /** `mark` waits for `by` too (it must not be settled yet). */
  expect(mark: Mark, by: string): void {
    mark.waiting.add(by);
  }

  /** `by` is done with `mark`. Settling twice, or by someone not waited for, changes nothing. */
  settle(mark: Mark, by: string): void {
    if (!mark.waiting.delete(by) || mark.waiting.size > 0) return;
    this.#advance(this.#scope(mark.scope));
  }

  /**
   * `by` dropped `mark`'s change and will never settle it (a sink dropping everything until its
   * resync): the watermark stops before it until {@link DeliveryWatermark.coveredUpTo} covers it.
   */
  dropped(mark: Mark, by: string): void {
    const barrier = this.#dropped.get(by);
    this.#dropped.set(by, { from: barrier?.from ?? mark.seq, to: mark.seq });
    this.settle(mark, by);
  }

  /** `by` is up to date with every mark up to `seq`: none of them waits for it any more. */
  coveredUpTo(by: string, seq: number): void {
    const barrier = this.#dropped.get(by);
    if (barrier !== undefined) {
      if (barrier.to <= seq) this.#dropped.delete(by);
      else barrier.from = Math.max(barrier.from, seq + 1);
    }
    for (const state of this.#scopes.values()) {
      for (let i = state.head; i < state.marks.length; i++) {
        const mark = state.marks[i];
        if (mark === undefined || mark.seq > seq) break;
        mark.waiting.delete(by);
      }
      this.#advance(state);
    }
  }

  #scope(name: string): Scope {
    const state = this.#scopes.get(name);
    if (state === undefined) throw new Error(`unknown watch scope ${JSON.stringify(name)} (a bug)`);
    return state;
  }

  #advance(state: Scope): void {
    let moved = false;
    let barrier = Infinity;
    for (const { from } of this.#dropped.values()) barrier = Math.min(barrier, from);
    while (state.head < state.marks.length) {
      const mark = state.marks[state.head];
      if (mark === undefined || mark.waiting.size > 0 || mark.seq >= barrier) break;
      state.head++;
      if (mark.resourceVersion !== undefined) {
        // A scope's marks come in resourceVersion order; the comparison only guards against a
        // server going back. Versions that cannot be ordered are taken as they come.
        const next =
          compareResourceVersions(mark.resourceVersion, state.confirmed) === -1
            ? state.confirmed
            : mark.resourceVersion;
        moved ||= next !== state.confirmed;
        state.confirmed = next;
      }
    }
    // Drop what was settled, now and then rather than per mark: shift() on a long queue is O(n).
    if (state.head === state.marks.length) {
      state.marks = [];
      state.head = 0;
    } else if (state.head > COMPACT_MIN && state.head * 2 > state.marks.length) {
      state.marks = state.marks.slice(state.head);
      state.head = 0;
    }
    if (state.marks.length - state.head > state.compactAt) {
      this.#compact(state);
      state.compactAt = Math.max(COMPACT_MIN, 2 * state.marks.length);
    }
    if (!moved) return;
    const value = this.#lowest();
    if (value === undefined || value === this.#value) return;
    this.#value = value;
    this.#onAdvance?.(value);
  }

  /**
   * Merge each run of settled marks behind a held head into one: the run's last `seq` and newest
   * resourceVersion. A merged mark only ever moves the watermark later than its parts would (a
   * barrier between them holds all of it), never past what is unsettled.
   */
  #compact(state: Scope): void {
    const kept: Mark[] = [];
    for (let i = state.head; i < state.marks.length; i++) {
      const mark = state.marks[i];
      if (mark === undefined) continue;
      const last = kept.at(-1);
      if (last !== undefined && last.waiting.size === 0 && mark.waiting.size === 0) {
        kept[kept.length - 1] = {
          seq: mark.seq,
          scope: mark.scope,
          resourceVersion: mark.resourceVersion ?? last.resourceVersion,
          waiting: mark.waiting,
        };
      } else kept.push(mark);
    }
    state.marks = kept;
    state.head = 0;
  }

  #lowest(): string | undefined {
    let lowest: string | undefined;
    for (const { confirmed } of this.#scopes.values()) {
      if (confirmed === undefined) return undefined;
      if (lowest === undefined) lowest = confirmed;
      else {
        const order = compareResourceVersions(confirmed, lowest);
        if (order === undefined) return undefined;
        if (order < 0) lowest = confirmed;
      }
    }
    return lowest;
  }
}
