/**
 * A client certificate and key (PEM text) from the configuration, presented in the TLS handshake.
 */
import type { AuthProvider, Credentials } from './auth-provider.js';

/** PEM-encoded certificate and private key. */
export interface CertificatePair {
  cert: string;
  key: string;
}

/**
 * Mutual TLS with a fixed certificate.
 *
 * @example
 * const auth = new ClientCertificateAuth({ cert: certPem, key: keyPem });
 */
export class ClientCertificateAuth implements AuthProvider {
  readonly kind = 'client-certificate';
  readonly #pair: CertificatePair;

  constructor(pair: CertificatePair) {
    this.#pair = { ...pair };
  }

  authenticate(): Promise<Credentials> {
    return Promise.resolve({ headers: {}, cert: this.#pair.cert, key: this.#pair.key });
  }

  invalidate(): void {
    // A certificate from a file or inline data does not change while we run.
  }
}
