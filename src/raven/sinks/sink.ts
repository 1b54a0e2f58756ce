/**
 * A sink receives change events (and, when it opted in, gap notices), one at a time, and either
 * delivers each or throws a SinkError saying whether a retry may succeed. Sinks do not retry,
 * queue or order: the delivery layer (`delivery/`) does that for every sink alike, so a sink is
 * only the wire format and the call.
 */
import type { SinkRecord } from '../model/gap-notice.js';

export interface Sink {
  /** The sink's name in the config (used in logs, metrics and checkpoints). */
  readonly name: string;
  /**
   * Deliver one change event or gap notice (`type: 'gap'`). Resolve when the receiver has
   * accepted it; throw `SinkError` otherwise (`retryable: false` for answers a retry cannot fix,
   * e.g. HTTP 400/401/403/404).
   */
  deliver(record: SinkRecord, signal: AbortSignal): Promise<void>;
  /** Flush and release resources. */
  close?(): Promise<void>;
}
