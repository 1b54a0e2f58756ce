/**
 * HTTP basic authentication from a kubeconfig `username`/`password`. Kept for old clusters;
 * current apiservers no longer accept it.
 */
import type { AuthProvider, Credentials } from './auth-provider.js';

/**
 * `Authorization: Basic base64(user:password)`.
 *
 * @example
 * const auth = new BasicAuth('admin', 'secret');
 */
export class BasicAuth implements AuthProvider {
  readonly kind = 'basic';
  readonly #header: string;

  constructor(username: string, password: string) {
    this.#header = `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
  }

  authenticate(): Promise<Credentials> {
    return Promise.resolve({ headers: { authorization: this.#header } });
  }

  invalidate(): void {
    // Static credentials cannot be refreshed.
  }
}
