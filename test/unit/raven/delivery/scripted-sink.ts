/**
 * A sink for delivery tests whose every call waits for the test to settle it, so tests decide
 * exactly when each delivery succeeds or fails, and can see what is in flight at any moment.
 */
import type { SinkRecord } from '../../../../src/raven/model/gap-notice.js';
import type { Sink } from '../../../../src/raven/sinks/sink.js';

export interface Call {
  event: SinkRecord;
  signal: AbortSignal;
  /** Virtual (or real) time the call started. */
  at: number;
  settled: boolean;
  succeed: () => void;
  fail: (err: unknown) => void;
}

export class ScriptedSink implements Sink {
  readonly name: string;
  readonly calls: Call[] = [];
  closed = 0;
  /** When set, each call is settled at once by this instead of waiting for the test. */
  auto: ((event: SinkRecord, call: Call) => void) | undefined;
  readonly #now: () => number;

  constructor(name: string, now: () => number) {
    this.name = name;
    this.#now = now;
  }

  deliver(event: SinkRecord, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => call.fail(signal.reason);
      const call: Call = {
        event,
        signal,
        at: this.#now(),
        settled: false,
        succeed: () => {
          call.settled = true;
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        fail: (err) => {
          call.settled = true;
          signal.removeEventListener('abort', onAbort);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.calls.push(call);
      this.auto?.(event, call);
    });
  }

  close(): Promise<void> {
    this.closed++;
    return Promise.resolve();
  }

  /** Calls not settled yet. */
  inFlight(): Call[] {
    return this.calls.filter((c) => !c.settled);
  }

  /** The names of the events handed over, in order. */
  names(): string[] {
    return this.calls.map((c) => (c.event.type === 'gap' ? 'gap' : c.event.name));
  }
}
