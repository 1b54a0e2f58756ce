/**
 * A bearer token fixed in the configuration. Invalidation is a no-op: there is nothing to refresh.
 */
import type { AuthProvider, Credentials } from './auth-provider.js';

/**
 * `Authorization: Bearer <token>`.
 *
 * @example
 * const auth = new TokenAuth('eyJhbGciOi...');
 */
export class TokenAuth implements AuthProvider {
  readonly kind = 'token';
  readonly #token: string;

  constructor(token: string) {
    this.#token = token;
  }

  authenticate(): Promise<Credentials> {
    return Promise.resolve({ headers: { authorization: `Bearer ${this.#token}` } });
  }

  invalidate(): void {
    // A static token cannot be refreshed.
  }
}
