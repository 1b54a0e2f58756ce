/** An informer source fed by the test: push watcher events, close to end it. No sockets. */
import type { KubeObject } from '../../../src/client/kube-object.js';
import type { InformerSource } from '../../../src/informer/informer.js';
import { stoppedStatus, type WatcherEvent, type WatcherStatus } from '../../../src/watch/watcher-events.js';

export class FeedSource<T extends KubeObject = KubeObject> implements InformerSource<T> {
  readonly #queue: WatcherEvent<T>[] = [];
  #wake: (() => void) | undefined;
  #closed = false;

  push(...events: WatcherEvent<T>[]): void {
    this.#queue.push(...events);
    this.#wake?.();
  }

  status(): WatcherStatus {
    return { ...stoppedStatus(), phase: 'watching', synced: true };
  }

  close(): void {
    this.#closed = true;
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatcherEvent<T>> {
    for (;;) {
      const next = this.#queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.#closed) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}
