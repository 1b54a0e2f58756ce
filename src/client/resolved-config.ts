/**
 * The result of configuration loading: everything a client needs to talk to one apiserver, as a
 * plain object. Secrets stay inside the auth provider; nothing here is logged verbatim except
 * {@link describeSource}.
 */
import type { AuthProvider } from './auth/auth-provider.js';

/** Server verification settings. Client certificates come from the auth provider. */
export interface TlsConfig {
  /** PEM text of the CA bundle; the system roots when undefined. */
  ca?: string;
  /** Skip server certificate verification (logged as a warning when loaded). */
  insecureSkipTlsVerify: boolean;
  /** SNI and verification name, when it differs from the server host. */
  serverName?: string;
}

/** Where a configuration came from. */
export type ConfigSource =
  | {
      kind: 'kubeconfig';
      /** `explicit` (an option), `KUBECONFIG` (the environment) or `default` (~/.kube/config). */
      origin: 'explicit' | 'KUBECONFIG' | 'default';
      files: string[];
      context: string;
      cluster: string;
      user?: string;
    }
  | { kind: 'in-cluster'; directory: string; host: string; port: string };

export interface ResolvedConfig {
  /** Server URL without a trailing slash; may carry a path prefix. */
  server: string;
  namespace: string;
  tls: TlsConfig;
  /** http, https or socks5 proxy URL. */
  proxyUrl?: string;
  auth: AuthProvider;
  source: ConfigSource;
}

/**
 * One line saying where the configuration came from, for logs and `--verbose` output.
 *
 * @example
 * describeSource(config.source) // 'kubeconfig (KUBECONFIG: /a:/b), context "dev"'
 */
export function describeSource(source: ConfigSource): string {
  switch (source.kind) {
    case 'kubeconfig':
      return `kubeconfig (${source.origin}: ${source.files.join(':')}), context ${JSON.stringify(source.context)}`;
    case 'in-cluster':
      return `in-cluster service account (${source.directory}, ${source.host}:${source.port})`;
  }
}
