/**
 * When the OpenStack transport sends a call again, and how long it waits first.
 *
 * Retried: network failures, 429, and 5xx other than 501, but only for calls that are safe to
 * repeat: GET, PUT and DELETE (a repeated DELETE that finds the resource gone is reported as done
 * by the callers), and calls marked idempotent (token creation). A POST that creates something is
 * sent again only when it provably never arrived (connection refused, name lookup failed, connect
 * timeout) or was refused with 429; a 5xx or a timeout after sending may have created the
 * resource, so it is reported instead of duplicated.
 *
 * Delays are the project's backoff (`util/backoff.ts`): doubling from `baseDelayMs` up to
 * `maxDelayMs`, with equal jitter (half fixed, half random) so that many callers do not retry in
 * step; a `Retry-After` is honoured up to `maxDelayMs`. Attempts are bounded by `maxAttempts`, the
 * first included.
 */
import { isNotSent, isRetryable, isTooManyRequests } from '../errors/classify.js';
import { backoffDelay, EQUAL_JITTER } from '../util/backoff.js';
import { OpenStackError } from '../errors/openstack-error.js';

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** Whether a failed attempt of a call may be sent again. */
export function shouldRetry(err: unknown, idempotent: boolean): boolean {
  if (!isRetryable(err)) return false;
  return idempotent || isNotSent(err) || isTooManyRequests(err);
}

/**
 * Milliseconds to wait before retry number `retry` (1 for the first retry).
 *
 * @example
 * retryDelay({ maxAttempts: 4, baseDelayMs: 250, maxDelayMs: 4000 }, 2, err, Math.random); // 250..500
 */
export function retryDelay(policy: RetryPolicy, retry: number, err: unknown, random: () => number): number {
  const jittered = backoffDelay(
    { initialMs: policy.baseDelayMs, maxMs: policy.maxDelayMs, factor: 2, jitter: EQUAL_JITTER },
    retry,
    random,
  );
  const after = err instanceof OpenStackError ? err.retryAfterSeconds : undefined;
  const asked = after === undefined ? 0 : Math.min(policy.maxDelayMs, after * 1000);
  return Math.round(Math.max(jittered, asked));
}
