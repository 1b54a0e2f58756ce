/**
 * Pod ports created with Neutron's bulk create, by group commit: a create asked while none is in
 * flight goes at once, alone (no waiting on a timer, so a lone pod is as fast as before); creates
 * asked while one is in flight wait for it and then go together in one call. Under a burst of new
 * pods the calls shrink to about one per round of workers, and nothing waits longer than one call.
 *
 * Neutron's bulk create is all or nothing. When it is answered with an error, nothing was made, so
 * each port of the batch is created again alone and each error reaches its own pod (one pod's
 * refused port does not fail the others). When no answer came (timeout, reset), whether the ports
 * were made is unknown: every caller gets the error, and the pods' next passes list what exists
 * before creating, as after any failed create.
 */
import { OpenStackError } from '../errors/openstack-error.js';

/** The part of the ports collection this needs. */
export interface BulkCollection<T, C> {
  create(input: C): Promise<T>;
  createMany(inputs: readonly C[]): Promise<T[]>;
}

interface Waiting<T, C> {
  input: C;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

export interface BatcherStats {
  /** Calls made: bulk ones, single ones. */
  bulkCalls: number;
  singleCalls: number;
}

/**
 * @example
 * const ports = new PortBatcher(neutron.ports, 50);
 * const port = await ports.create({ network_id, fixed_ips: [{ subnet_id }], tags });
 */
export class PortBatcher<T, C> {
  readonly #collection: BulkCollection<T, C>;
  readonly #maxBatch: number;
  #waiting: Waiting<T, C>[] = [];
  #inFlight = false;
  readonly stats: BatcherStats = { bulkCalls: 0, singleCalls: 0 };

  /** `maxBatch`: the most ports in one call (a bound on one request's size and duration). */
  constructor(collection: BulkCollection<T, C>, maxBatch = 50) {
    this.#collection = collection;
    this.#maxBatch = Math.max(1, maxBatch);
  }

  create(input: C): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push({ input, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    if (this.#inFlight || this.#waiting.length === 0) return;
    const batch = this.#waiting.splice(0, this.#maxBatch);
    this.#inFlight = true;
    void this.#send(batch).finally(() => {
      this.#inFlight = false;
      this.#pump();
    });
  }

  async #send(batch: Waiting<T, C>[]): Promise<void> {
    if (batch.length === 1) return this.#alone(batch);
    try {
      this.stats.bulkCalls++;
      const created = await this.#collection.createMany(batch.map((w) => w.input));
      batch.forEach((w, i) => w.resolve(created[i] as T));
    } catch (error) {
      // Answered: nothing was made (all or nothing); each alone, so each error is its own pod's.
      if (error instanceof OpenStackError && error.status !== undefined) await this.#alone(batch);
      else for (const w of batch) w.reject(error);
    }
  }

  async #alone(batch: Waiting<T, C>[]): Promise<void> {
    await Promise.all(
      batch.map(async (w) => {
        try {
          this.stats.singleCalls++;
          w.resolve(await this.#collection.create(w.input));
        } catch (error) {
          w.reject(error);
        }
      }),
    );
  }
}
