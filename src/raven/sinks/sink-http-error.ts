/**
 * The error HTTP sinks throw: a {@link SinkError} that also carries the status code (when an answer
 * arrived) and how long the receiver asked us to wait (Retry-After, or a product's own field such
 * as Discord's `retry_after`). The delivery layer reads the wait with {@link sinkRetryAfterMs}.
 */
import { SinkError, type RavenErrorOptions } from '../../errors/raven-error.js';

export class SinkHttpError extends SinkError {
  /** The HTTP status, or undefined when the request failed before an answer (refused, timed out). */
  readonly statusCode: number | undefined;
  /** The receiver's requested wait before the next attempt, in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    options: RavenErrorOptions & { retryable: boolean; statusCode?: number; retryAfterMs?: number },
  ) {
    super(message, options);
    this.statusCode = options.statusCode;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** The wait a sink error asks for, in milliseconds, when it asks for one. */
export function sinkRetryAfterMs(err: unknown): number | undefined {
  if (!(err instanceof SinkError) || !('retryAfterMs' in err)) return undefined;
  const ms = err.retryAfterMs;
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}
