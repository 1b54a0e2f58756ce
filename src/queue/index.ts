/** The work queue's public surface. Re-exports only. */
export { createWorkQueue, type WorkQueue, type WorkQueueOptions, type QueueItem } from './work-queue.js';
export { createDelayingQueue, type DelayingQueue, type DelayingQueueOptions } from './delaying-queue.js';
export {
  createRateLimitingQueue,
  type RateLimitingQueue,
  type RateLimitingQueueOptions,
} from './rate-limiting-queue.js';
export type { RateLimiter } from './rate-limiter.js';
export { exponentialRateLimiter, type ExponentialRateLimiterOptions } from './exponential-rate-limiter.js';
export { bucketRateLimiter, type BucketRateLimiterOptions } from './bucket-rate-limiter.js';
export { maxOfRateLimiter } from './max-of-rate-limiter.js';
export { defaultControllerRateLimiter } from './default-controller-rate-limiter.js';
export { noopQueueMetrics, type QueueMetrics, type UnfinishedWork } from './queue-metrics.js';
export { done, requeueAfter, failed, type HandlerResult } from './handler-result.js';
export {
  runWorkers,
  WorkerRunner,
  type WorkHandler,
  type WorkSource,
  type WorkerRunnerOptions,
  type WorkerStats,
  type ShutdownReport,
} from './worker-runner.js';
