/**
 * Several providers at once, as a kubeconfig user may carry a client certificate together with a
 * token. Headers are merged in order; the last provider that supplies a certificate wins.
 */
import type { AuthProvider, Credentials } from './auth-provider.js';

/**
 * Combine providers; a single provider is returned as it is.
 *
 * @example
 * import { ClientCertificateAuth, TokenAuth } from 'kube-raven/auth';
 * const auth = combineAuth([new ClientCertificateAuth(pair), new TokenAuth(token)]);
 */
export function combineAuth(providers: readonly AuthProvider[]): AuthProvider {
  if (providers.length === 1 && providers[0] !== undefined) return providers[0];
  return {
    kind: providers.map((p) => p.kind).join('+') || 'anonymous',
    async authenticate(signal?: AbortSignal): Promise<Credentials> {
      const all = await Promise.all(providers.map((p) => p.authenticate(signal)));
      const out: Credentials = { headers: {} };
      for (const c of all) {
        Object.assign(out.headers, c.headers);
        if (c.cert !== undefined && c.key !== undefined) {
          out.cert = c.cert;
          out.key = c.key;
        }
      }
      return out;
    },
    invalidate(): void {
      for (const p of providers) p.invalidate();
    },
  };
}
