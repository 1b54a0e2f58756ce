/**
 * Kubeconfig loading: read one or more files, merge them as kubectl does (see
 * `kubeconfig-merge.ts`), pick the context and turn it into a {@link ResolvedConfig}.
 *
 * Only the selected context's cluster and user are validated deeply and only their files are
 * read; every problem is a ConfigError naming the file and the field path, e.g.
 * `/home/u/.kube/config: users[1].user.client-certificate: file not found: /x/y.crt`.
 */
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../errors/raven-error.js';
import { systemClock, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import type { AuthProvider } from './auth/auth-provider.js';
import { anonymousAuth } from './auth/auth-provider.js';
import { BasicAuth } from './auth/basic-auth.js';
import { ClientCertificateAuth } from './auth/client-certificate-auth.js';
import { combineAuth } from './auth/combined-auth.js';
import { ExecAuth } from './auth/exec-auth.js';
import { checkExecConfig, type ExecClusterInfo } from './auth/exec-credential.js';
import { TokenAuth } from './auth/token-auth.js';
import { TokenFileAuth } from './auth/token-file-auth.js';
import { at, fieldError, type FieldLocation } from './config-fields.js';
import {
  readKubeconfigFile,
  type ClusterEntry,
  type KubeconfigFile,
  type Named,
  type UserEntry,
} from './kubeconfig-file.js';
import { mergeKubeconfigs, type MergedKubeconfig } from './kubeconfig-merge.js';
import type { ResolvedConfig, TlsConfig } from './resolved-config.js';

export interface KubeconfigOptions {
  /** Use this context instead of `current-context`. */
  context?: string;
  clock?: Clock;
  logger?: Logger;
  /** Base environment for exec plugins; default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Kill exec plugins after this long; default 60 000 ms. */
  execTimeoutMs?: number;
  /** Whether stdin is a terminal (exec interactiveMode); default `process.stdin.isTTY`. */
  stdinIsTTY?: boolean;
}

/**
 * Read kubeconfig files in precedence order. Missing files are skipped when `skipMissing` (the
 * KUBECONFIG rule) and an error otherwise; malformed files are always an error.
 */
export async function readKubeconfigFiles(
  paths: readonly string[],
  skipMissing: boolean,
): Promise<KubeconfigFile[]> {
  const files: KubeconfigFile[] = [];
  for (const path of paths) {
    try {
      files.push(await readKubeconfigFile(path));
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && skipMissing) continue;
      const what = code === 'ENOENT' ? 'file not found' : (err as Error).message;
      throw new ConfigError(`cannot read kubeconfig: ${what}`, { file: path, cause: err });
    }
  }
  return files;
}

/**
 * Load and resolve kubeconfig files (highest precedence first).
 *
 * @example
 * const config = await loadKubeconfig(['/home/u/.kube/config'], 'explicit', { context: 'dev' });
 */
export async function loadKubeconfig(
  paths: readonly string[],
  origin: 'explicit' | 'KUBECONFIG' | 'default',
  options: KubeconfigOptions = {},
): Promise<ResolvedConfig> {
  const files = await readKubeconfigFiles(paths, origin === 'KUBECONFIG');
  if (files.length === 0) throw new ConfigError(`none of the kubeconfig files exist: ${paths.join(', ')}`);
  return resolveKubeconfig(mergeKubeconfigs(files), origin, options);
}

/** Pick the context of a merged kubeconfig and resolve it. */
export async function resolveKubeconfig(
  merged: MergedKubeconfig,
  origin: 'explicit' | 'KUBECONFIG' | 'default',
  options: KubeconfigOptions = {},
): Promise<ResolvedConfig> {
  const logger = options.logger ?? silentLogger;
  const firstFile: FieldLocation = { file: merged.files.join(':'), path: '' };
  const contextName = options.context ?? merged.currentContext?.name;
  const names = (list: readonly Named<unknown>[]): string => list.map((e) => e.name).join(', ') || '(none)';
  if (contextName === undefined) {
    throw fieldError(
      at(firstFile, 'current-context'),
      `is not set and no context was given; defined contexts: ${names(merged.contexts)}`,
    );
  }
  const context = merged.contexts.find((c) => c.name === contextName);
  if (context === undefined) {
    const where =
      options.context === undefined && merged.currentContext ? merged.currentContext.loc : undefined;
    const message = `context ${JSON.stringify(contextName)} is not defined; defined contexts: ${names(merged.contexts)}`;
    throw where === undefined
      ? new ConfigError(message, { file: firstFile.file })
      : fieldError(where, message);
  }
  const clusterName = context.value.cluster;
  if (clusterName === undefined) throw fieldError(at(context.loc, 'cluster'), 'is required');
  const cluster = merged.clusters.find((c) => c.name === clusterName);
  if (cluster === undefined) {
    throw fieldError(
      at(context.loc, 'cluster'),
      `cluster ${JSON.stringify(clusterName)} is not defined; defined clusters: ${names(merged.clusters)}`,
    );
  }
  let user: Named<UserEntry> | undefined;
  if (context.value.user !== undefined) {
    user = merged.users.find((u) => u.name === context.value.user);
    if (user === undefined) {
      throw fieldError(
        at(context.loc, 'user'),
        `user ${JSON.stringify(context.value.user)} is not defined; defined users: ${names(merged.users)}`,
      );
    }
  }

  const { server, tls, proxyUrl } = await resolveCluster(cluster);
  if (tls.insecureSkipTlsVerify) {
    logger.warn(
      { cluster: cluster.name, server },
      'insecure-skip-tls-verify is set: the server certificate is not verified',
    );
  }
  const clusterInfo: ExecClusterInfo = {
    server,
    insecureSkipTlsVerify: tls.insecureSkipTlsVerify,
    ...(tls.ca === undefined ? {} : { certificateAuthority: tls.ca }),
    ...(tls.serverName === undefined ? {} : { tlsServerName: tls.serverName }),
    ...(proxyUrl === undefined ? {} : { proxyUrl }),
    ...(cluster.value.execExtension === undefined ? {} : { config: cluster.value.execExtension }),
  };
  const auth = user === undefined ? anonymousAuth : await resolveUser(user, clusterInfo, options);
  return {
    server,
    namespace: context.value.namespace ?? 'default',
    tls,
    ...(proxyUrl === undefined ? {} : { proxyUrl }),
    auth,
    source: {
      kind: 'kubeconfig',
      origin,
      files: merged.files,
      context: context.name,
      cluster: cluster.name,
      ...(user === undefined ? {} : { user: user.name }),
    },
  };
}

async function readAt(path: string, loc: FieldLocation): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw fieldError(
      loc,
      code === 'ENOENT' ? `file not found: ${path}` : `cannot read ${path}: ${(err as Error).message}`,
      err,
    );
  }
}

const proxySchemes = ['http:', 'https:', 'socks5:', 'socks:'];

async function resolveCluster(
  cluster: Named<ClusterEntry>,
): Promise<{ server: string; tls: TlsConfig; proxyUrl?: string }> {
  const c = cluster.value;
  const loc = cluster.loc;
  if (c.server === undefined) throw fieldError(at(loc, 'server'), 'is required');
  let url: URL;
  try {
    url = new URL(c.server);
  } catch {
    throw fieldError(at(loc, 'server'), `is not a URL: ${JSON.stringify(c.server)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw fieldError(
      at(loc, 'server'),
      `must be an https:// or http:// URL, got ${JSON.stringify(c.server)}`,
    );
  }
  let ca = c.certificateAuthorityData;
  if (ca === undefined && c.certificateAuthority !== undefined) {
    ca = await readAt(c.certificateAuthority, at(loc, 'certificate-authority'));
  }
  if (c.insecureSkipTlsVerify && ca !== undefined) {
    throw fieldError(
      at(loc, 'insecure-skip-tls-verify'),
      'cannot be combined with a certificate authority; remove one of them',
    );
  }
  if (c.proxyUrl !== undefined) {
    let proxy: URL | undefined;
    try {
      proxy = new URL(c.proxyUrl);
    } catch {
      proxy = undefined;
    }
    if (proxy === undefined || !proxySchemes.includes(proxy.protocol)) {
      throw fieldError(
        at(loc, 'proxy-url'),
        `unsupported proxy ${JSON.stringify(c.proxyUrl)}; use an http://, https:// or socks5:// URL`,
      );
    }
  }
  const tls: TlsConfig = { insecureSkipTlsVerify: c.insecureSkipTlsVerify };
  if (ca !== undefined) tls.ca = ca;
  if (c.tlsServerName !== undefined) tls.serverName = c.tlsServerName;
  const server = url.href.replace(/\/+$/, '');
  return c.proxyUrl === undefined ? { server, tls } : { server, tls, proxyUrl: c.proxyUrl };
}

async function resolveUser(
  user: Named<UserEntry>,
  cluster: ExecClusterInfo,
  options: KubeconfigOptions,
): Promise<AuthProvider> {
  const u = user.value;
  const loc = user.loc;
  if (u.hasAuthProvider) {
    throw fieldError(
      at(loc, 'auth-provider'),
      'auth-provider plugins are not supported; configure an exec credential plugin instead',
    );
  }
  const methods = [
    u.token !== undefined || u.tokenFile !== undefined ? 'token' : undefined,
    u.username !== undefined || u.password !== undefined ? 'username/password' : undefined,
    u.exec !== undefined ? 'exec' : undefined,
  ].filter((m) => m !== undefined);
  if (methods.length > 1) {
    throw fieldError(
      loc,
      `more than one authentication method is set (${methods.join(', ')}); keep only one`,
    );
  }
  const providers: AuthProvider[] = [];
  const pair = await resolveClientCertificate(u, loc);
  if (pair !== undefined) providers.push(new ClientCertificateAuth(pair));
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  if (u.tokenFile !== undefined) {
    await readAt(u.tokenFile, at(loc, 'tokenFile'));
    providers.push(new TokenFileAuth({ file: u.tokenFile, clock, logger }));
  } else if (u.token !== undefined) {
    providers.push(new TokenAuth(u.token));
  }
  if (u.username !== undefined || u.password !== undefined) {
    if (u.username === undefined || u.password === undefined) {
      throw fieldError(
        at(loc, u.username === undefined ? 'username' : 'password'),
        'is required with the other of username/password',
      );
    }
    providers.push(new BasicAuth(u.username, u.password));
  }
  if (u.exec !== undefined) {
    const problem = checkExecConfig(u.exec);
    if (problem !== undefined) throw fieldError(at(at(loc, 'exec'), problem.field), problem.message);
    providers.push(
      new ExecAuth({
        exec: u.exec,
        cluster,
        clock,
        logger,
        ...(options.env === undefined ? {} : { env: options.env }),
        ...(options.execTimeoutMs === undefined ? {} : { timeoutMs: options.execTimeoutMs }),
        ...(options.stdinIsTTY === undefined ? {} : { stdinIsTTY: options.stdinIsTTY }),
      }),
    );
  }
  return providers.length === 0 ? anonymousAuth : combineAuth(providers);
}

async function resolveClientCertificate(
  u: UserEntry,
  loc: FieldLocation,
): Promise<{ cert: string; key: string } | undefined> {
  const cert =
    u.clientCertificateData ??
    (u.clientCertificate === undefined
      ? undefined
      : await readAt(u.clientCertificate, at(loc, 'client-certificate')));
  const key =
    u.clientKeyData ??
    (u.clientKey === undefined ? undefined : await readAt(u.clientKey, at(loc, 'client-key')));
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined)
    throw fieldError(at(loc, 'client-certificate'), 'is required when a client key is set');
  if (key === undefined)
    throw fieldError(at(loc, 'client-key'), 'is required when a client certificate is set');
  return { cert, key };
}
