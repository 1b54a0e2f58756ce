/**
 * In-cluster configuration from the pod's service account: the apiserver address from
 * KUBERNETES_SERVICE_HOST/PORT (IPv6 hosts are bracketed), the token (re-read as it rotates), the
 * CA bundle and the namespace from the mounted secret directory.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../errors/raven-error.js';
import { systemClock, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { TokenFileAuth } from './auth/token-file-auth.js';
import type { ResolvedConfig, TlsConfig } from './resolved-config.js';

/** Where the kubelet mounts the service account secret. */
export const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface InClusterOptions {
  /** Environment to read KUBERNETES_SERVICE_HOST/PORT and POD_NAMESPACE from; default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Service account directory; default {@link serviceAccountDir}. */
  directory?: string;
  clock?: Clock;
  logger?: Logger;
}

/**
 * Build the in-cluster configuration, or throw a ConfigError saying what is missing.
 *
 * @example
 * const config = await loadInClusterConfig();
 */
export async function loadInClusterConfig(options: InClusterOptions = {}): Promise<ResolvedConfig> {
  const env = options.env ?? process.env;
  const directory = options.directory ?? serviceAccountDir;
  const host = env.KUBERNETES_SERVICE_HOST ?? '';
  const port = env.KUBERNETES_SERVICE_PORT ?? '';
  if (host === '' || port === '') {
    throw new ConfigError(
      'not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set',
      {
        path: host === '' ? 'KUBERNETES_SERVICE_HOST' : 'KUBERNETES_SERVICE_PORT',
      },
    );
  }
  const tokenFile = join(directory, 'token');
  const token = await readOptional(tokenFile);
  if (token === undefined || token.trim() === '') {
    throw new ConfigError('service account token is missing or empty', { file: tokenFile });
  }
  const ca = await readOptional(join(directory, 'ca.crt'));
  const namespace = env.POD_NAMESPACE ?? (await readOptional(join(directory, 'namespace')))?.trim();
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const tls: TlsConfig = { insecureSkipTlsVerify: false };
  if (ca !== undefined) tls.ca = ca;
  else
    (options.logger ?? silentLogger).warn(
      { directory },
      'no ca.crt in the service account directory; using system roots',
    );
  return {
    server: `https://${bracketed}:${port}`,
    namespace: namespace === undefined || namespace === '' ? 'default' : namespace,
    tls,
    auth: new TokenFileAuth({
      file: tokenFile,
      clock: options.clock ?? systemClock,
      logger: options.logger ?? silentLogger,
    }),
    source: { kind: 'in-cluster', directory, host, port },
  };
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`cannot read: ${(err as Error).message}`, { file, cause: err });
  }
}
