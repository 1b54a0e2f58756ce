/**
 * A virtual clock for tests: time moves only when the test calls {@link FakeClock.tick} or
 * {@link FakeClock.runAll}, and due timers fire in order of their due time.
 */
import type { Clock, TimerHandle } from '../util/clock.js';

interface Scheduled {
  handle: TimerHandle;
  due: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  #timers = new Map<number, Scheduled>();

  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const handle: TimerHandle = { id: ++this.#seq };
    this.#timers.set(handle.id, { handle, due: this.#now + Math.max(0, ms), seq: handle.id, fn });
    return handle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle.id);
  }

  /** Number of timers still scheduled. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Due time of the earliest timer, or undefined when none is scheduled. */
  nextDue(): number | undefined {
    let best: number | undefined;
    for (const t of this.#timers.values()) if (best === undefined || t.due < best) best = t.due;
    return best;
  }

  /**
   * Advance virtual time by `ms`, firing every timer that falls due on the way (including timers
   * scheduled by those callbacks), and letting promise continuations run between firings.
   */
  async tick(ms: number): Promise<void> {
    const target = this.#now + ms;
    await flushMicrotasks();
    for (;;) {
      const next = this.#earliest();
      if (next === undefined || next.due > target) break;
      this.#timers.delete(next.handle.id);
      this.#now = Math.max(this.#now, next.due);
      next.fn();
      await flushMicrotasks();
    }
    this.#now = target;
    await flushMicrotasks();
  }

  /** Fire timers until none is left or `limit` have fired; returns how many fired. */
  async runAll(limit = 10_000): Promise<number> {
    let fired = 0;
    await flushMicrotasks();
    while (fired < limit) {
      const next = this.#earliest();
      if (next === undefined) break;
      this.#timers.delete(next.handle.id);
      this.#now = Math.max(this.#now, next.due);
      next.fn();
      fired++;
      await flushMicrotasks();
    }
    return fired;
  }

  /**
   * Move time forward by `ms` without firing anything, as when the process's event loop is blocked:
   * timers that fell due fire late, at the next {@link FakeClock.tick}, seeing the later time.
   */
  block(ms: number): void {
    this.#now += ms;
  }

  #earliest(): Scheduled | undefined {
    let best: Scheduled | undefined;
    for (const t of this.#timers.values()) {
      if (best === undefined || t.due < best.due || (t.due === best.due && t.seq < best.seq)) best = t;
    }
    return best;
  }
}

/** Let pending promise continuations run (several turns, for chains of awaits). */
export async function flushMicrotasks(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
}
