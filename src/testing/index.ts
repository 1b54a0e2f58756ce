/** `kube-raven/testing`: helpers for testing code built on Raven. Re-exports only. */
export { FakeClock, flushMicrotasks } from './fake-clock.js';
