/**
 * How a request gets its credentials. A provider answers {@link AuthProvider.authenticate} with
 * headers to send and, optionally, a client certificate for the TLS handshake. Providers cache
 * what they can; {@link AuthProvider.invalidate} drops the cache, and the transport calls it once
 * when the apiserver answers 401, then retries the request exactly once.
 */

/** What one request should carry. `cert`/`key` are PEM text for mutual TLS. */
export interface Credentials {
  headers: Record<string, string>;
  cert?: string;
  key?: string;
}

/**
 * A source of credentials.
 *
 * @example
 * const creds = await provider.authenticate(signal);
 * // on a 401: provider.invalidate(); then authenticate again
 */
export interface AuthProvider {
  /** A short label for logs and diagnostics: `token`, `token-file`, `exec`, ... Never a secret. */
  readonly kind: string;
  authenticate(signal?: AbortSignal): Promise<Credentials>;
  /** Forget cached credentials; the next authenticate() fetches fresh ones. */
  invalidate(): void;
}

/** No credentials at all. */
export const anonymousAuth: AuthProvider = {
  kind: 'anonymous',
  authenticate: () => Promise.resolve({ headers: {} }),
  invalidate: () => undefined,
};
