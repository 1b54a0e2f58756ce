/**
 * The daemon's first step: each watcher's `resource` (`deploy`, `deployments.apps`, a CRD's
 * plural) resolved by discovery, before anything is watched.
 *
 * - A name the server does not serve is a `ConfigError` on `watchers[i].resource`, with the
 *   discovery's message (which suggests the nearest served name): the daemon cannot heal it.
 * - An apiserver that cannot be reached (or answers 5xx/429) is asked again with backoff, 0.5 s
 *   doubling to 30 s with jitter, and said once per watcher with a count when it answers: a
 *   daemon started beside its apiserver finds it within a second or two, and one started while
 *   the apiserver is down asks twice a minute at most and does not fill its log.
 * - An events watcher on `api: auto` falls back to core v1 Events where `events.k8s.io/v1` is not
 *   served.
 * - A stop while waiting resolves `undefined`: there is nothing to run.
 *
 * `raven check` asks once instead ({@link checkWatcherResources}): every name the server does not
 * serve is a problem on its field, and a server that does not answer is an error, not a wait.
 */
import type { ResolvedResource } from '../client/api-resource.js';
import { UnknownResourceError } from '../client/unknown-resource-error.js';
import { isRetryable } from '../errors/classify.js';
import { ConfigError } from '../errors/raven-error.js';
import { Backoff, type BackoffOptions } from '../util/backoff.js';
import { sleep, type Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { WatcherConfig } from './config/watcher-schema.js';

/**
 * Retrying discovery at start-up while the apiserver is unreachable: 0.5 s doubling to 30 s, so a
 * daemon started beside its apiserver finds it within a second or two, and one started while the
 * apiserver is down asks twice a minute at most; ±20 % jitter so a fleet of daemons restarted
 * together does not ask in lock-step.
 */
export const DISCOVERY_RETRY: BackoffOptions = { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.2 };

/** What resolving needs of discovery. */
export interface ResourceResolver {
  resolve(input: string, signal?: AbortSignal): Promise<ResolvedResource>;
}

export interface ResolveWatchersOptions {
  clock: Clock;
  logger: Logger;
  signal: AbortSignal;
  /** Random numbers in [0, 1) for the retry jitter. */
  random?: () => number;
  /** The config's file name, named in the error for a resource the server does not serve. */
  configFile?: string;
}

/** Each watcher's resolved resource, by watcher name; `undefined` when stopped first. */
export async function resolveWatchers(
  watchers: readonly WatcherConfig[],
  discovery: ResourceResolver,
  options: ResolveWatchersOptions,
): Promise<Map<string, ResolvedResource> | undefined> {
  const { clock, logger, signal } = options;
  const resolved = new Map<string, ResolvedResource>();
  for (const [index, watcher] of watchers.entries()) {
    const backoff = new Backoff({ ...DISCOVERY_RETRY, random: options.random ?? Math.random });
    for (;;) {
      try {
        const eventsFallback = watcher.type === 'events' && watcher.api === 'auto';
        resolved.set(
          watcher.name,
          await resolveOne(discovery, watcher.resource, eventsFallback, logger, signal),
        );
        if (backoff.failures > 0)
          logger.info({ watcher: watcher.name, attempts: backoff.failures + 1 }, 'discovery answered');
        break;
      } catch (error) {
        if (signal.aborted) return undefined;
        if (!isRetryable(error)) throw resourceProblem(error, index, options.configFile);
        const delay = backoff.fail();
        if (backoff.failures === 1)
          logger.warn(
            { watcher: watcher.name, err: (error as Error).message, retryInMs: delay },
            'cannot reach the apiserver for discovery; retrying',
          );
        try {
          await sleep(clock, delay, signal);
        } catch {
          return undefined;
        }
      }
    }
  }
  return resolved;
}

/**
 * Every watcher's resource resolved once, without retrying: what `raven check` asks of a cluster.
 * Resolves with one `ConfigError` on `watchers[i].resource` for each name the server does not
 * serve (none when all resolve); rejects with the error of a server that could not be asked
 * (unreachable, 5xx, 401/403): the names were not checked.
 */
export async function checkWatcherResources(
  watchers: readonly WatcherConfig[],
  discovery: ResourceResolver,
  options: { logger: Logger; signal: AbortSignal; configFile?: string },
): Promise<ConfigError[]> {
  const problems: ConfigError[] = [];
  for (const [index, watcher] of watchers.entries()) {
    const eventsFallback = watcher.type === 'events' && watcher.api === 'auto';
    try {
      await resolveOne(discovery, watcher.resource, eventsFallback, options.logger, options.signal);
    } catch (error) {
      if (!(error instanceof UnknownResourceError)) throw error;
      problems.push(resourceProblem(error, index, options.configFile));
    }
  }
  return problems;
}

/** A name the server does not serve, as a problem on the watcher's `resource` field. */
function resourceProblem(error: unknown, index: number, configFile: string | undefined): ConfigError {
  return new ConfigError(error instanceof Error ? error.message : String(error), {
    path: `watchers[${index}].resource`,
    ...(configFile === undefined ? {} : { file: configFile }),
    cause: error,
  });
}

/** A watcher's resource; an events watcher on `api: auto` falls back to core v1 Events. */
async function resolveOne(
  discovery: ResourceResolver,
  resource: string,
  eventsFallback: boolean,
  logger: Logger,
  signal: AbortSignal,
): Promise<ResolvedResource> {
  try {
    return await discovery.resolve(resource, signal);
  } catch (error) {
    if (!eventsFallback || !(error instanceof UnknownResourceError)) throw error;
    logger.info({ resource }, 'events.k8s.io/v1 is not served; reading core v1 Events');
    return discovery.resolve('v1/events', signal);
  }
}
