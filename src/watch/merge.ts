/**
 * Merge several async iterables into one, preserving each source's order. A source is read only
 * when the consumer asks for more (each source has at most one event waiting), so backpressure
 * reaches every source; closing the merged iterator closes every source.
 *
 * A source with a read in flight cannot be closed until that read settles (async generators queue
 * `return()` behind `next()`), so `onClose` is called first to make the sources finish — for
 * watchers, by aborting them.
 */
export async function* merge<T>(
  sources: readonly AsyncIterable<T>[],
  onClose: () => void = () => undefined,
): AsyncGenerator<T, void, undefined> {
  const iterators = sources.map((source) => source[Symbol.asyncIterator]());
  const pending = new Map<number, Promise<{ index: number; result: IteratorResult<T> }>>();
  const pull = (index: number): void => {
    const iterator = iterators[index];
    if (iterator === undefined) return;
    pending.set(
      index,
      iterator.next().then((result) => ({ index, result })),
    );
  };
  iterators.forEach((_, index) => {
    pull(index);
  });
  try {
    while (pending.size > 0) {
      const { index, result } = await Promise.race(pending.values());
      pending.delete(index);
      if (result.done === true) continue;
      yield result.value;
      pull(index);
    }
  } finally {
    onClose();
    await Promise.allSettled(
      iterators.map(async (iterator) => {
        await iterator.return?.();
      }),
    );
  }
}
