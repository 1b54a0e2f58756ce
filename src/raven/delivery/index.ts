/**
 * Delivery: retries, ordering, backlog and dead letters for every sink alike. Re-exports only.
 */
export {
  SinkDelivery,
  type SinkDeliveryOptions,
  type Routing,
  type RoutedRecord,
  type Settlement,
  type Verdict,
  type DeliveryState,
  type OverflowedObject,
  type CloseResult,
} from './sink-delivery.js';
export { noopDeliveryMetrics, type DeliveryMetrics } from '../metrics/delivery-metrics.js';
export { DeadLetterFile, type DeadLetterRecord, type DeadLetterWriter } from './dead-letter.js';
export { retryBackoffMs, type RetryBackoffOptions } from './retry-backoff.js';
