/**
 * Metrics hooks for one sink's delivery: a small interface the delivery reports to, with a no-op
 * default, so a Prometheus (or any other) adapter plugs in without the delivery knowing about it.
 * One instance per sink: the adapter labels what it records with the sink's name. Durations are
 * in seconds, as Prometheus conventions want.
 */

/**
 * @example
 * const metrics: DeliveryMetrics = {
 *   ...noopDeliveryMetrics,
 *   delivered: () => deliveredTotal.inc({ sink: 'audit' }),
 *   backlog: (n) => backlogGauge.set({ sink: 'audit' }, n),
 * };
 */
export interface DeliveryMetrics {
  /** An event was accepted by the sink. */
  delivered(): void;
  /** An event was not delivered again: the sink had confirmed it before a restart. */
  duplicate(): void;
  /** One attempt failed; `kind` is a short stable label (`sink`, `transport`, `unknown`). */
  failed(kind: string): void;
  /** A failed attempt will be tried again after a wait. */
  retried(): void;
  /** An event was given up on and written to the dead-letter file. */
  deadLettered(): void;
  /** Events held (queued, waiting to retry, or in flight), after every change. */
  backlog(size: number): void;
  /** From enqueue to the sink's acceptance, retries included. */
  latency(seconds: number): void;
  /** The backlog limit was exceeded; queued events were dropped until a resync. */
  overflowed(): void;
}

/** Reports nothing; the default. */
export const noopDeliveryMetrics: DeliveryMetrics = {
  delivered: () => undefined,
  duplicate: () => undefined,
  failed: () => undefined,
  retried: () => undefined,
  deadLettered: () => undefined,
  backlog: () => undefined,
  latency: () => undefined,
  overflowed: () => undefined,
};
