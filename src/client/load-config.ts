/**
 * Configuration discovery in kubectl's order: an explicit kubeconfig path, else the KUBECONFIG
 * path list, else ~/.kube/config, else the in-cluster service account. When KUBECONFIG is set,
 * ~/.kube/config is not consulted (as kubectl does). A file that exists but is broken stops the
 * search with its error; only absent sources fall through, and if none is found the error lists
 * why each one was rejected.
 */
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../errors/raven-error.js';
import type { Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { loadInClusterConfig } from './in-cluster.js';
import { readKubeconfigFiles, resolveKubeconfig, type KubeconfigOptions } from './kubeconfig.js';
import { mergeKubeconfigs } from './kubeconfig-merge.js';
import { describeSource, type ResolvedConfig } from './resolved-config.js';

export interface LoadConfigOptions {
  /** An explicit kubeconfig file; it must exist. */
  kubeconfig?: string | undefined;
  /** Use this context instead of the current one. */
  context?: string | undefined;
  /** Environment (HOME, KUBECONFIG, KUBERNETES_SERVICE_*); default `process.env`. Also the exec plugins' base env. */
  env?: Record<string, string | undefined> | undefined;
  /** Service account directory for in-cluster configuration (tests). */
  inClusterDirectory?: string;
  clock?: Clock;
  logger?: Logger;
  execTimeoutMs?: number;
  stdinIsTTY?: boolean;
}

/**
 * Find and resolve the configuration to use.
 *
 * @example
 * const config = await loadConfig({ context: process.env.RAVEN_CONTEXT });
 * logger.info({ source: describeSource(config.source) }, 'using cluster configuration');
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<ResolvedConfig> {
  const env = options.env ?? process.env;
  const logger = options.logger ?? silentLogger;
  const kubeOptions: KubeconfigOptions = {
    env,
    logger,
    ...(options.context === undefined ? {} : { context: options.context }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.execTimeoutMs === undefined ? {} : { execTimeoutMs: options.execTimeoutMs }),
    ...(options.stdinIsTTY === undefined ? {} : { stdinIsTTY: options.stdinIsTTY }),
  };
  const done = (config: ResolvedConfig): ResolvedConfig => {
    logger.info(
      { source: describeSource(config.source), server: config.server },
      'loaded cluster configuration',
    );
    return config;
  };

  if (options.kubeconfig !== undefined) {
    const files = await readKubeconfigFiles([options.kubeconfig], false);
    return done(await resolveKubeconfig(mergeKubeconfigs(files), 'explicit', kubeOptions));
  }

  const tried: string[] = [];
  const list = (env.KUBECONFIG ?? '').split(':').filter((p) => p !== '');
  if (list.length > 0) {
    const files = await readKubeconfigFiles(list, true);
    if (files.length > 0)
      return done(await resolveKubeconfig(mergeKubeconfigs(files), 'KUBECONFIG', kubeOptions));
    tried.push(`KUBECONFIG=${list.join(':')}: none of the files exist`);
  } else if (env.HOME !== undefined && env.HOME !== '') {
    const path = join(env.HOME, '.kube', 'config');
    if (await exists(path)) {
      const files = await readKubeconfigFiles([path], false);
      return done(await resolveKubeconfig(mergeKubeconfigs(files), 'default', kubeOptions));
    }
    tried.push(`${path}: not found`);
  } else {
    tried.push('KUBECONFIG and HOME are not set, so there is no default kubeconfig');
  }

  try {
    return done(
      await loadInClusterConfig({
        env,
        logger,
        ...(options.inClusterDirectory === undefined ? {} : { directory: options.inClusterDirectory }),
        ...(options.clock === undefined ? {} : { clock: options.clock }),
      }),
    );
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    tried.push(`in-cluster: ${err.message}`);
    throw new ConfigError(`no cluster configuration found:\n  - ${tried.join('\n  - ')}`, { cause: err });
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
