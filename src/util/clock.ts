/**
 * Time, injected. Engine code never calls `Date.now()` or `setTimeout` directly: it asks a
 * {@link Clock}, so tests can run on virtual time (see `testing/fake-clock.ts`).
 */

/** An opaque handle for a scheduled callback. */
export interface TimerHandle {
  readonly id: number;
}

export interface TimerOptions {
  /**
   * A background check nobody awaits (the health check of an idle pooled connection): it must not
   * keep the process alive on its own.
   */
  background?: boolean;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Run `fn` after `ms` milliseconds. A pending timer is work somebody awaits (a backoff, a retry, a
   * deadline), so on the real clock it keeps the process alive until it fires or is cleared.
   */
  setTimeout(fn: () => void, ms: number, options?: TimerOptions): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

let nextId = 1;

/**
 * The real clock, backed by Node's timers. Its timers hold the process like a request in flight
 * does: a script whose only pending work is a watcher backing off must not exit in the middle of
 * it. Everything that schedules a timer clears it when closed or aborted, so closing releases the
 * process.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms, options) {
    const timer = setTimeout(fn, ms);
    if (options?.background === true) timer.unref();
    return { id: nextId++, timer } as TimerHandle;
  },
  clearTimeout(handle) {
    clearTimeout((handle as TimerHandle & { timer: NodeJS.Timeout }).timer);
  },
};

/**
 * Resolve after `ms` on `clock`, or reject with the signal's reason when it aborts first.
 *
 * @example
 * await sleep(systemClock, 500, signal);
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(signal?.reason as Error);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
