/**
 * The daemon's diagnostics channels (`node:diagnostics_channel`), one per step a change takes from
 * the watch to a sink, named `raven:<area>:<event>` as undici names its own. Subscribe to trace a
 * change end to end; with no subscriber a step costs one `hasSubscribers` check, and no message
 * object is built.
 *
 * | channel                   | published when                                        | message                        |
 * | ------------------------- | ----------------------------------------------------- | ------------------------------ |
 * | `raven:watcher:change`    | a watcher passes a change on (after its store update) | {@link WatcherChangeMessage}   |
 * | `raven:router:verdict`    | the router decided what a sink does with a change     | {@link RouterVerdictMessage}   |
 * | `raven:delivery:enqueue`  | a record entered a sink's delivery queue              | {@link DeliveryEnqueueMessage} |
 * | `raven:delivery:settle`   | a record left it: delivered, silent, duplicate, dead  | {@link DeliverySettleMessage}  |
 * | `raven:watcher:gap`       | a gap was reported (changes may be missing)           | {@link WatcherGapMessage}      |
 *
 * Messages hold the daemon's own objects (the change event, the record): read them, never change
 * them. A subscriber that throws is reported by Node on `process` (`uncaughtException`) and does
 * not stop the daemon's step.
 *
 * @example
 * import { subscribe } from 'node:diagnostics_channel';
 * subscribe('raven:delivery:settle', (message) => {
 *   const { sink, record, how } = message as DeliverySettleMessage;
 *   console.log(sink, record.id, how);
 * });
 */
import { channel } from 'node:diagnostics_channel';
import type { ChangeEvent } from './change-event.js';
import type { Settlement, Verdict } from './delivery-verdict.js';
import type { GapReason, SinkRecord } from './gap-notice.js';

export interface WatcherChangeMessage {
  watcher: string;
  /** The watch the change came from: a namespace, or `*`. */
  scope: string;
  event: ChangeEvent;
}

export interface RouterVerdictMessage {
  sink: string;
  event: ChangeEvent;
  verdict: Verdict;
}

export interface DeliveryEnqueueMessage {
  sink: string;
  record: SinkRecord;
  verdict: Verdict;
  /** False when the delivery did not take it (overflowed, or shutting down). */
  queued: boolean;
}

export interface DeliverySettleMessage {
  sink: string;
  record: SinkRecord;
  how: Settlement;
  /** Attempts made at the sink (0 when it settled without the sink). */
  attempts: number;
}

export interface WatcherGapMessage {
  watcher: string;
  reason: GapReason;
  sinks: readonly string[];
  namespace: string | undefined;
  fromResourceVersion: string | undefined;
  toResourceVersion: string | undefined;
}

export const WATCHER_CHANGE = 'raven:watcher:change';
export const ROUTER_VERDICT = 'raven:router:verdict';
export const DELIVERY_ENQUEUE = 'raven:delivery:enqueue';
export const DELIVERY_SETTLE = 'raven:delivery:settle';
export const WATCHER_GAP = 'raven:watcher:gap';

export const watcherChangeChannel = channel(WATCHER_CHANGE);
export const routerVerdictChannel = channel(ROUTER_VERDICT);
export const deliveryEnqueueChannel = channel(DELIVERY_ENQUEUE);
export const deliverySettleChannel = channel(DELIVERY_SETTLE);
export const watcherGapChannel = channel(WATCHER_GAP);
