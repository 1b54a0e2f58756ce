/**
 * A dead-stream detector: wraps a response body and calls `onIdle` when no bytes arrive for `ms`
 * while the reader is waiting for them. Time spent by the consumer between reads does not count,
 * so a slow consumer is never mistaken for a dead server. `ms` may be a function, read before each
 * wait, for a deadline that changes as the stream goes on.
 */
import type { Clock } from '../util/clock.js';

export async function* guardInactivity(
  body: AsyncIterable<Uint8Array>,
  ms: number | (() => number),
  clock: Clock,
  onIdle: () => void,
): AsyncGenerator<Uint8Array, void, undefined> {
  const iterator = body[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      const timer = clock.setTimeout(onIdle, typeof ms === 'number' ? ms : ms());
      let result: IteratorResult<Uint8Array>;
      try {
        result = await iterator.next();
      } finally {
        clock.clearTimeout(timer);
      }
      if (result.done === true) {
        finished = true;
        return;
      }
      yield result.value;
    }
  } finally {
    if (!finished) await iterator.return?.();
  }
}
