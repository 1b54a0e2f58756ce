/**
 * The one `Retry-After` parser (RFC 9110 §10.2.3), for every HTTP answer Raven reads: the
 * Kubernetes apiserver, OpenStack services and sink receivers.
 *
 * A header is a number of seconds (`120`; a fraction such as `1.5`, which some proxies send, is
 * taken as written) or an HTTP date, read relative to `now`. An absent, empty or malformed value is
 * undefined, never zero, so a garbled header does not turn into "retry at once". A date in the
 * past is zero; without `now` (a caller with no clock at hand) a date is ignored.
 */

/**
 * Milliseconds the server asked to wait, or undefined when it did not say.
 *
 * @example
 * parseRetryAfter('7', clock.now()); // => 7000
 * parseRetryAfter('Wed, 21 Oct 2026 07:28:00 GMT', Date.parse('Wed, 21 Oct 2026 07:27:30 GMT')); // => 30000
 * parseRetryAfter('soon', clock.now()); // => undefined
 */
export function parseRetryAfter(
  value: string | readonly string[] | undefined,
  now: number | undefined,
): number | undefined {
  const text = typeof value === 'string' ? value : value?.[0];
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) return Math.round(Number(text) * 1000);
  // Every HTTP date names its month; without a letter Date.parse would read '-1' as a year.
  if (!/[A-Za-z]/.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) || now === undefined ? undefined : Math.max(0, date - now);
}

/**
 * {@link parseRetryAfter} in whole seconds, rounded up (a wait is never shortened), for APIs that
 * carry seconds (`Status.details.retryAfterSeconds`).
 *
 * @example
 * retryAfterHeaderSeconds('1.2', clock.now()); // => 2
 */
export function retryAfterHeaderSeconds(
  value: string | readonly string[] | undefined,
  now: number | undefined,
): number | undefined {
  const ms = parseRetryAfter(value, now);
  return ms === undefined ? undefined : Math.ceil(ms / 1000);
}
