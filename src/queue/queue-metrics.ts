/**
 * Metrics hooks for work queues: a small interface the queue reports to, with a no-op default, so a
 * Prometheus (or any other) adapter can be plugged in without the queue knowing about it. Durations
 * are in seconds, as Prometheus conventions want.
 *
 * Unfinished work is pulled rather than pushed: the queue hands the adapter a probe once, and the
 * adapter calls it when it is scraped. That keeps a periodic timer out of the queue.
 */

/** How much work is in progress right now. */
export interface UnfinishedWork {
  /** Sum over keys being processed of how long each has been processing. */
  seconds: number;
  /** How long the longest-running key has been processing; 0 when none is. */
  longestRunningSeconds: number;
}

/**
 * What a queue reports, one instance per queue (an adapter labels it with the queue's name).
 *
 * @example
 * const metrics: QueueMetrics = {
 *   ...noopQueueMetrics,
 *   depth: (n) => depthGauge.set({ name: 'pods' }, n),
 *   queueLatency: (s) => latencyHistogram.observe({ name: 'pods' }, s),
 * };
 */
export interface QueueMetrics {
  /** Keys waiting to be handed out, after every change. */
  depth(depth: number): void;
  /** A key was added (a key deduplicated against one already waiting is not counted). */
  added(): void;
  /** How long a key waited between being added and being handed to a worker. */
  queueLatency(seconds: number): void;
  /** How long a worker held a key, from `get` to `done`. */
  workDuration(seconds: number): void;
  /** A key was re-added through the rate limiter. */
  retried(): void;
  /** Called once when the queue is created, with a probe to read unfinished work on demand. */
  unfinishedWork(probe: () => UnfinishedWork): void;
}

/** Reports nothing; the default. */
export const noopQueueMetrics: QueueMetrics = {
  depth: () => undefined,
  added: () => undefined,
  queueLatency: () => undefined,
  workDuration: () => undefined,
  retried: () => undefined,
  unfinishedWork: () => undefined,
};
