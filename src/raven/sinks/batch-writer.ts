/**
 * Turns a sink's one-at-a-time `deliver` calls into batched writes: deliveries that arrive while
 * earlier batches are being written wait and go together in the next batch (up to `maxBatch`),
 * so a server round trip carries many changes without a timer adding latency. The delivery layer
 * hands a sink at most one event per object at a time, so a batch never holds two events of one
 * object, and batches in flight together (`maxInFlight`) never reorder an object's events.
 *
 * Each `submit` settles with its batch: resolved when the whole batch was written, rejected with
 * the write's error otherwise (the delivery layer retries each event on its own; the streaming
 * sinks make a repeated write a no-op). A write that can tell which items failed returns one
 * outcome per item instead (`undefined` for written, the error otherwise), and each delivery
 * settles with its own. A delivery whose signal aborted before its batch was taken is rejected
 * without being written.
 */
import { abortReason } from '../../util/signals.js';

export interface BatchWriterOptions {
  /** Most items per write. */
  maxBatch: number;
  /** Writes in flight at the same time (e.g. the connection pool's size). */
  maxInFlight: number;
}

interface Waiting<T> {
  item: T;
  signal: AbortSignal;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * @example
 * const writer = new BatchWriter(
 *   async (rows: Row[]) => void (await pg.query('INSERT INTO changes SELECT * FROM json_populate_recordset(NULL::changes, $1)', [JSON.stringify(rows)])),
 *   { maxBatch: 500, maxInFlight: 2 },
 * );
 * await writer.submit(row, signal); // resolves once the batch holding `row` is written
 */
/** A write: resolves with nothing (all written) or with one outcome per item, `undefined` for written. */
export type BatchWrite<T> = ((items: T[]) => Promise<void>) | ((items: T[]) => Promise<readonly unknown[]>);

export class BatchWriter<T> {
  readonly #write: BatchWrite<T>;
  readonly #maxBatch: number;
  readonly #maxInFlight: number;
  #waiting: Waiting<T>[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(write: BatchWrite<T>, options: BatchWriterOptions) {
    this.#write = write;
    this.#maxBatch = Math.max(1, options.maxBatch);
    this.#maxInFlight = Math.max(1, options.maxInFlight);
  }

  /** Items waiting for a batch. */
  get waiting(): number {
    return this.#waiting.length;
  }

  submit(item: T, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(abortReason(signal));
    return new Promise<void>((resolve, reject) => {
      this.#waiting.push({ item, signal, resolve, reject });
      // Start on a later microtask, so deliveries started in the same turn share the first batch.
      if (!this.#scheduled) {
        this.#scheduled = true;
        queueMicrotask(() => {
          this.#scheduled = false;
          this.#startWrites();
        });
      }
    });
  }

  #startWrites(): void {
    while (this.#inFlight < this.#maxInFlight && this.#waiting.length > 0) {
      const taken = this.#waiting.splice(0, this.#maxBatch);
      const live: Waiting<T>[] = [];
      for (const w of taken) {
        if (w.signal.aborted) w.reject(abortReason(w.signal));
        else live.push(w);
      }
      if (live.length === 0) continue;
      this.#inFlight++;
      void this.#run(live);
    }
  }

  async #run(batch: Waiting<T>[]): Promise<void> {
    try {
      const outcome = await this.#write(batch.map((w) => w.item));
      batch.forEach((w, i) => {
        const failure: unknown = Array.isArray(outcome) ? (outcome as readonly unknown[])[i] : undefined;
        if (failure === undefined) w.resolve();
        else w.reject(failure);
      });
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      this.#inFlight--;
      this.#startWrites();
    }
  }
}
