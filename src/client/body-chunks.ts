/**
 * A response body as the chunks the connection delivered, one at a time, with bounded buffering.
 *
 * Why not the stream's own async iterator: it reads with `read()`, which hands over everything
 * buffered so far concatenated into one new buffer. Whenever the consumer falls behind (a watch
 * consumer usually does, for a moment), every buffered byte is copied again, and a watcher that
 * keeps views of the bytes it decoded keeps the large joined buffers alive. In flowing mode the
 * chunks arrive as the connection produced them, never joined; the body is paused while more than
 * {@link HIGH_WATER_BYTES} wait, so a slow consumer holds the connection back instead of growing
 * memory.
 *
 * The iterator ends when the body ends, throws what the body failed with (mapped by `failure`),
 * and destroys the body when the consumer stops early.
 */
import type { Readable } from 'node:stream';

/** Bytes delivered and not yet taken by the consumer before the body is paused. */
export const HIGH_WATER_BYTES = 1024 * 1024;

export function bodyChunks(body: Readable, failure: (err: unknown) => Error): AsyncIterable<Uint8Array> {
  return { [Symbol.asyncIterator]: () => new BodyChunks(body, failure) };
}

type Waiter = { resolve: (r: IteratorResult<Uint8Array>) => void; reject: (err: Error) => void };

class BodyChunks implements AsyncIterator<Uint8Array> {
  readonly #body: Readable;
  readonly #failure: (err: unknown) => Error;
  readonly #queue: Uint8Array[] = [];
  #head = 0;
  #queuedBytes = 0;
  #ended = false;
  #error: Error | undefined;
  #waiter: Waiter | undefined;

  constructor(body: Readable, failure: (err: unknown) => Error) {
    this.#body = body;
    this.#failure = failure;
    body.on('data', (chunk: Uint8Array) => {
      const waiter = this.#waiter;
      if (waiter !== undefined) {
        this.#waiter = undefined;
        waiter.resolve({ value: chunk, done: false });
        return;
      }
      this.#queue.push(chunk);
      this.#queuedBytes += chunk.length;
      if (this.#queuedBytes > HIGH_WATER_BYTES) body.pause();
    });
    body.on('end', () => {
      this.#ended = true;
      this.#settle();
    });
    body.on('error', (err: unknown) => {
      this.#error ??= this.#failure(err);
      this.#settle();
    });
    body.on('close', () => {
      // Closed without 'end' or 'error': the connection went away under the body.
      if (!this.#ended && this.#error === undefined)
        this.#error = this.#failure(new Error('the response was closed'));
      this.#settle();
    });
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    if (this.#head < this.#queue.length) {
      const chunk = this.#queue[this.#head] as Uint8Array;
      this.#queue[this.#head++] = EMPTY;
      this.#queuedBytes -= chunk.length;
      if (this.#head === this.#queue.length) {
        this.#queue.length = 0;
        this.#head = 0;
      }
      if (this.#body.isPaused() && this.#queuedBytes <= HIGH_WATER_BYTES / 2) this.#body.resume();
      return Promise.resolve({ value: chunk, done: false });
    }
    if (this.#error !== undefined) return Promise.reject(this.#error);
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.#waiter = { resolve, reject }));
  }

  return(): Promise<IteratorResult<Uint8Array>> {
    this.#ended = true;
    this.#queue.length = 0;
    this.#head = 0;
    this.#queuedBytes = 0;
    if (!this.#body.destroyed) this.#body.destroy();
    return Promise.resolve({ value: undefined, done: true });
  }

  #settle(): void {
    const waiter = this.#waiter;
    if (waiter === undefined) return;
    this.#waiter = undefined;
    if (this.#error !== undefined) waiter.reject(this.#error);
    else if (this.#ended) waiter.resolve({ value: undefined, done: true });
  }
}

const EMPTY = new Uint8Array(0);
