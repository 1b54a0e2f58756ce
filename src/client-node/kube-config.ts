/**
 * A client-node `KubeConfig` read into Raven's own client.
 *
 * How: `kc.exportConfig()` (the same method in client-node 1.x and 2.x) gives the kubeconfig
 * the object holds — clusters, users, contexts and the current context, file paths already
 * absolute — and Raven resolves that text exactly as it resolves a kubeconfig file: client
 * certificates, bearer tokens, token files re-read as they rotate, exec credential plugins, basic
 * auth. Raven's client then makes every request (undici, HTTP/2, its own TLS and retries);
 * client-node's HTTP code is never called. `applyToFetchOptions` was not used: it returns one
 * request's headers and agent, a snapshot that goes stale when a token rotates.
 *
 * The configuration is read once, when the first informer or watch of a `KubeConfig` starts;
 * later changes to the object (another context) are not seen by running informers. One client
 * (one connection pool) serves every informer and watch of the same object and is closed when
 * the last of them stops.
 *
 * client-node's in-cluster configuration (`loadFromCluster`) is an auth-provider named
 * `tokenFile`; it is read as the kubeconfig field `tokenFile` (re-read as the token rotates).
 * Other auth-provider plugins (the legacy `oidc`, `azure`, `gcp`) are refused with a config
 * error, as Raven refuses them in a kubeconfig: use an exec credential plugin instead.
 */
import { KubeClient } from '../client/kube-client.js';
import { resolveKubeconfig } from '../client/kubeconfig.js';
import { parseKubeconfig } from '../client/kubeconfig-file.js';
import { mergeKubeconfigs } from '../client/kubeconfig-merge.js';
import type { ResolvedConfig } from '../client/resolved-config.js';
import { ConfigError } from '../errors/raven-error.js';

/** What Raven uses of client-node's `KubeConfig`: its export. */
export interface KubeConfigLike {
  exportConfig(): string;
}

/** The name configuration errors carry in place of a file name. */
const SOURCE = 'KubeConfig (client-node)';

interface Shared {
  client: Promise<KubeClient>;
  users: number;
}

const shared = new WeakMap<object, Shared>();

/**
 * Resolve a client-node `KubeConfig` the way Raven resolves a kubeconfig file.
 *
 * @example
 * const config = await resolveClientNodeConfig(kc); // kc: a loaded client-node KubeConfig
 * console.log(config.server);
 */
export async function resolveClientNodeConfig(kc: KubeConfigLike): Promise<ResolvedConfig> {
  if (typeof (kc as Partial<KubeConfigLike> | undefined)?.exportConfig !== 'function') {
    throw new ConfigError(
      'expected a KubeConfig from @kubernetes/client-node (an object with exportConfig()), e.g. `const kc = new KubeConfig(); kc.loadFromDefault()`',
      { file: SOURCE },
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(kc.exportConfig());
  } catch (err) {
    throw new ConfigError(`exportConfig() did not return JSON: ${(err as Error).message}`, {
      file: SOURCE,
      cause: err,
    });
  }
  readInClusterToken(doc);
  const file = parseKubeconfig(JSON.stringify(doc), SOURCE);
  return resolveKubeconfig(mergeKubeconfigs([file]), 'explicit');
}

/**
 * Raven's client for `kc`, shared by every caller until each has called `release`.
 * A configuration error rejects (and is not cached: a fixed `KubeConfig` can be tried again).
 */
export function acquireClient(kc: KubeConfigLike): Promise<KubeClient> {
  let entry = shared.get(kc);
  if (entry === undefined) {
    const client = resolveClientNodeConfig(kc).then((config) => new KubeClient(config));
    entry = { client, users: 0 };
    shared.set(kc, entry);
    client.catch(() => shared.delete(kc));
  }
  entry.users++;
  return entry.client;
}

/** Give back a client from {@link acquireClient}; the last user closes its connections. */
export async function releaseClient(kc: KubeConfigLike): Promise<void> {
  const entry = shared.get(kc);
  if (entry === undefined) return;
  entry.users--;
  if (entry.users > 0) return;
  shared.delete(kc);
  const client = await entry.client.catch(() => undefined);
  await client?.destroy();
}

/**
 * client-node's `loadFromCluster` writes the service account token as an auth-provider named
 * `tokenFile`; Raven's kubeconfig has a field for it.
 */
function readInClusterToken(doc: unknown): void {
  const users = (doc as { users?: unknown } | null)?.users;
  if (!Array.isArray(users)) return;
  for (const entry of users as ({ user?: Record<string, unknown> } | null)[]) {
    const user = entry?.user;
    const provider = user?.['auth-provider'] as
      { name?: string; config?: { tokenFile?: string } } | undefined;
    if (user === undefined || provider?.name !== 'tokenFile') continue;
    const tokenFile = provider.config?.tokenFile;
    if (typeof tokenFile !== 'string') continue;
    delete user['auth-provider'];
    user.tokenFile = tokenFile;
  }
}
