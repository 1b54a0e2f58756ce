/**
 * The OpenStack client's default clock: real time, like `systemClock`, but its timers keep the
 * process alive. A retry delay or a wait for a load balancer to go ACTIVE is work a caller is
 * awaiting, just like a request in flight; with unref'ed timers a script (or a test) whose only
 * pending work is such a wait would exit in the middle of it.
 */
import { systemClock, type Clock, type TimerHandle } from '../util/clock.js';

let nextId = 1;
const timers = new Map<number, NodeJS.Timeout>();

export const keepAliveClock: Clock = {
  now: () => systemClock.now(),
  setTimeout(fn, ms) {
    const handle: TimerHandle = { id: nextId++ };
    timers.set(
      handle.id,
      setTimeout(() => {
        timers.delete(handle.id);
        fn();
      }, ms),
    );
    return handle;
  },
  clearTimeout(handle) {
    clearTimeout(timers.get(handle.id));
    timers.delete(handle.id);
  },
};
