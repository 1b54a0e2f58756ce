/** Test helper: watch a promise's state without awaiting it. */
import { flushMicrotasks } from '../../../src/testing/fake-clock.js';

export interface Tracked<T> {
  readonly settled: boolean;
  readonly value: T | undefined;
  readonly error: unknown;
  readonly promise: Promise<T>;
}

export function track<T>(promise: Promise<T>): Tracked<T> {
  const state: { settled: boolean; value: T | undefined; error: unknown; promise: Promise<T> } = {
    settled: false,
    value: undefined,
    error: undefined,
    promise,
  };
  promise.then(
    (value) => {
      state.settled = true;
      state.value = value;
    },
    (error: unknown) => {
      state.settled = true;
      state.error = error;
    },
  );
  return state;
}

export { flushMicrotasks };
