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
 * them. A subscriber that throws does not stop the step nor the daemon: the error is caught, logged
 * once per subscriber (to {@link reportSubscriberErrorsTo}'s logger, stderr by default), and the
 * step goes on. (Left to Node, `publish` would rethrow it as an uncaught exception and the
 * process would exit.) This holds for subscribers added through `subscribe(name, fn)` or the
 * channel's own `subscribe` once this module is loaded.
 *
 * @example
 * import { subscribe } from 'node:diagnostics_channel';
 * subscribe('raven:delivery:settle', (message) => {
 *   const { sink, record, how } = message as DeliverySettleMessage;
 *   console.log(sink, record.id, how);
 * });
 */
import { type Channel, channel, type ChannelListener } from 'node:diagnostics_channel';
import { type Logger, stderrLogger } from '../../util/logger.js';
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

let subscriberErrors: Logger = stderrLogger;

/** Where a throwing subscriber is reported (the daemon passes its own logger). */
export function reportSubscriberErrorsTo(logger: Logger): void {
  subscriberErrors = logger;
}

/** Marks a listener this module wrapped, so it is not wrapped twice. */
const GUARDED = Symbol('raven:diagnostics:guarded');
type Guarded = ChannelListener & { [GUARDED]?: true };
interface ChannelMethods {
  subscribe(this: Channel, listener: ChannelListener): void;
  unsubscribe(this: Channel, listener: ChannelListener): boolean | undefined;
}

/**
 * The channel, with each listener subscribed to it wrapped in a catch: an error is logged the first
 * time that listener throws and never leaves it. Node's `subscribe(name, fn)` subscribes through
 * the channel object, so both ways are covered; the channel's own methods (whose prototype Node
 * swaps as the first subscriber comes and the last goes) do the rest.
 */
function guarded(name: string): Channel {
  const ch = channel(name);
  const wrappers = new WeakMap<ChannelListener, ChannelListener>();
  // The channel's methods of the moment (Node swaps its prototype); called by name by
  // `subscribe(name, fn)`, which is what users call.
  const proto = (): ChannelMethods => Object.getPrototypeOf(ch) as ChannelMethods;
  Object.defineProperties(ch, {
    subscribe: {
      value(listener: Guarded): void {
        if (listener[GUARDED]) {
          proto().subscribe.call(ch, listener);
          return;
        }
        let reported = false;
        const wrapper: Guarded = (message, channelName) => {
          try {
            listener(message, channelName);
          } catch (err) {
            if (reported) return;
            reported = true;
            subscriberErrors.error(
              { err, channel: name },
              'a diagnostics channel subscriber threw; the step went on (later errors of this subscriber are not logged)',
            );
          }
        };
        wrapper[GUARDED] = true;
        wrappers.set(listener, wrapper);
        proto().subscribe.call(ch, wrapper);
      },
    },
    unsubscribe: {
      value(listener: ChannelListener): boolean {
        const wrapper = wrappers.get(listener);
        wrappers.delete(listener);
        return proto().unsubscribe.call(ch, wrapper ?? listener) ?? false;
      },
    },
  });
  return ch;
}

export const watcherChangeChannel = guarded(WATCHER_CHANGE);
export const routerVerdictChannel = guarded(ROUTER_VERDICT);
export const deliveryEnqueueChannel = guarded(DELIVERY_ENQUEUE);
export const deliverySettleChannel = guarded(DELIVERY_SETTLE);
export const watcherGapChannel = guarded(WATCHER_GAP);
