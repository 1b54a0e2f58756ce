/**
 * The changes the contestants must deliver: one ConfigMap, `ticker`, whose `data.seq` is set to
 * 1, 2, 3 ... every 200 ms by the suite's admin client, straight to the apiserver (never through a
 * contestant's proxy). Each write is stamped with the wall clock just before it is sent, so "a
 * change made after time t" is a seq whose write was sent at or after t. A write that failed (the
 * apiserver is down) leaves a seq nobody sees.
 */
import type { ControlPlane } from '../../test/harness/control-plane.js';

export const TICKER = 'ticker';

/** Period of the writes: the resolution of "resumed". */
export const TICK_MS = 200;

export class Ticker {
  readonly #plane: ControlPlane;
  readonly #path: string;
  readonly #sentAt = new Map<number, number>();
  #seq = 0;
  #inFlight = 0;
  #timer: NodeJS.Timeout | undefined;

  private constructor(plane: ControlPlane, namespace: string) {
    this.#plane = plane;
    this.#path = `/api/v1/namespaces/${namespace}/configmaps/${TICKER}`;
  }

  /** Create the ticker in `namespace` and start writing. */
  static async start(plane: ControlPlane, namespace: string): Promise<Ticker> {
    const created = await plane.adminRequest('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: TICKER, namespace },
      data: { seq: '0' },
    });
    if (created.status !== 201) throw new Error(`creating the ticker: ${created.status} ${created.body}`);
    const ticker = new Ticker(plane, namespace);
    ticker.#timer = setInterval(() => {
      // One write at a time, except for pokes: a slow apiserver is not piled up on.
      if (ticker.#inFlight === 0) ticker.poke();
    }, TICK_MS);
    return ticker;
  }

  /** Write the next seq now (at a recovery point, so that "resumed" is not quantised by the period). */
  poke(): void {
    const seq = ++this.#seq;
    this.#inFlight++;
    this.#sentAt.set(seq, Date.now());
    this.#plane
      .adminRequest('PATCH', this.#path, { data: { seq: String(seq) } })
      .catch(() => undefined)
      .finally(() => this.#inFlight--);
  }

  /** When the write of `seq` was sent. */
  sentAt(seq: number): number | undefined {
    return this.#sentAt.get(seq);
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
