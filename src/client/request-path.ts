/**
 * Query strings for apiserver requests: undefined values are dropped, everything else is
 * percent-encoded, and the order of keys is kept so logged paths are stable.
 */

/** Query parameters; `undefined` means "not set". */
export type Query = Record<string, string | number | boolean | undefined>;

/**
 * Append `query` to `path`.
 *
 * @example
 * withQuery('/api/v1/pods', { limit: 500, continue: undefined }) // '/api/v1/pods?limit=500'
 */
export function withQuery(path: string, query: Query | undefined): string {
  if (query === undefined) return path;
  const parts: string[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  }
  if (parts.length === 0) return path;
  return `${path}${path.includes('?') ? '&' : '?'}${parts.join('&')}`;
}
