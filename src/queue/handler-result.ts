/**
 * What a work handler tells the runner about a key: it is done (its backoff is reset), it should be
 * looked at again after a delay (a poll, not a failure), or it failed (retry with backoff).
 */

export type HandlerResult =
  | { readonly kind: 'done' }
  | { readonly kind: 'requeue-after'; readonly ms: number }
  | { readonly kind: 'error'; readonly error: unknown };

const doneResult: HandlerResult = Object.freeze({ kind: 'done' });

/**
 * The key is handled; forget its backoff.
 *
 * @example
 * return done();
 */
export function done(): HandlerResult {
  return doneResult;
}

/**
 * Handled for now, but look again in `ms` (e.g. a certificate to renew). Resets the backoff.
 *
 * @example
 * return requeueAfter(60_000);
 */
export function requeueAfter(ms: number): HandlerResult {
  return { kind: 'requeue-after', ms };
}

/**
 * Handling failed in a way worth retrying; the key is re-added with backoff. A handler that throws
 * or rejects is treated the same way.
 *
 * @example
 * if (isRetryable(err)) return failed(err);
 */
export function failed(error: unknown): HandlerResult {
  return { kind: 'error', error };
}
