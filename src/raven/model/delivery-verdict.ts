/**
 * What the router and the delivery layer decide about one record, as types: the verdict (does the
 * sink see it), how it settled, and the routing that travels with it through a sink's queue
 * (`delivery/sink-delivery.ts`). Here, below both, so that the router, the diagnostics channels
 * and the queue share them without importing one another.
 */
import type { SinkRecord } from './gap-notice.js';

/** Whether the sink sees an event, or it only passes through the queue in order. */
export type Verdict = 'deliver' | 'silent';

/** How an event left the queue (dropped and abandoned events never settle). */
export type Settlement = 'delivered' | 'silent' | 'duplicate' | 'dead-lettered';

/** What the owner decided about one event; it travels with the event through the queue. */
export interface Routing {
  /** Default `deliver`. */
  verdict?: Verdict;
  /** Asked at the head of the object's queue: true skips the event as one the sink already has. */
  alreadyDelivered?: () => boolean;
  /** Called once, when the event settles. */
  settled?: (how: Settlement) => void;
}

/** An event with its routing, as `resync` takes them. */
export interface RoutedRecord extends Routing {
  record: SinkRecord;
}
