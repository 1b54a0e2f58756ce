/**
 * API discovery with a cache: which resources the apiserver serves, and what a typed name
 * (`po`, `deploy`, `deployments.apps`, `apps/v1/deployments/scale`) refers to.
 *
 * Aggregated discovery (one request each for /api and /apis) is used when served; otherwise the
 * legacy documents are fetched per group version, and a group version that fails (an aggregated
 * API server that is down) is skipped with a warning, as kubectl does. The result is cached;
 * resolving an unknown name refreshes once, but not more often than every
 * `minRefreshIntervalMs`, so a typo cannot hammer the apiserver.
 */
import { systemClock, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import type { ApiResource, ResolvedResource } from './api-resource.js';
import {
  aggregatedDiscoveryAccept,
  isAggregated,
  legacyGroupVersions,
  parseAggregated,
  parseResourceList,
} from './discovery-documents.js';
import type { RequestOptions } from './kube-client.js';
import { closeMatches, matchResource } from './resource-matcher.js';
import { UnknownResourceError } from './unknown-resource-error.js';

/** The part of a client discovery needs. */
export interface DiscoveryRequester {
  request<T>(opts: RequestOptions): Promise<T>;
}

export interface DiscoveryOptions {
  clock?: Clock;
  logger?: Logger;
  /** Minimum time between refreshes caused by unknown names; default 5 000 ms. */
  minRefreshIntervalMs?: number;
}

/**
 * Cached discovery for one client.
 *
 * @example
 * const discovery = new Discovery(client);
 * const deploy = await discovery.resolve('deploy'); // { group: 'apps', version: 'v1', resource: 'deployments', ... }
 */
export class Discovery {
  readonly #client: DiscoveryRequester;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #minRefreshMs: number;
  #cache: readonly ApiResource[] | undefined;
  #fetchedAt = -Infinity;
  #loading: Promise<readonly ApiResource[]> | undefined;

  constructor(client: DiscoveryRequester, options: DiscoveryOptions = {}) {
    this.#client = client;
    this.#clock = options.clock ?? systemClock;
    this.#logger = (options.logger ?? silentLogger).child({ component: 'discovery' });
    this.#minRefreshMs = options.minRefreshIntervalMs ?? 5_000;
  }

  /** Every served resource, in discovery order (cached after the first call). */
  resources(signal?: AbortSignal): Promise<readonly ApiResource[]> {
    return this.#cache === undefined ? this.refresh(signal) : Promise.resolve(this.#cache);
  }

  /** Fetch discovery again; concurrent calls share one fetch. */
  refresh(signal?: AbortSignal): Promise<readonly ApiResource[]> {
    this.#loading ??= this.#fetch(signal).finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }

  /**
   * Resolve a typed name, or throw {@link UnknownResourceError} listing close matches. A name the
   * cache does not know, resource or subresource, refreshes it first (subject to the interval).
   */
  async resolve(input: string, signal?: AbortSignal): Promise<ResolvedResource> {
    let resources = await this.resources(signal);
    let match = tryMatch(resources, input);
    const known = match !== undefined && !(match instanceof UnknownResourceError);
    if (!known && this.#clock.now() - this.#fetchedAt >= this.#minRefreshMs) {
      this.#logger.debug({ input }, 'unknown resource name; refreshing discovery once');
      resources = await this.refresh(signal);
      match = tryMatch(resources, input);
    }
    if (match instanceof UnknownResourceError) throw match;
    if (match !== undefined) return match;
    throw new UnknownResourceError(
      input,
      `the server does not serve a resource named ${JSON.stringify(input)}`,
      closeMatches(resources, input),
    );
  }

  async #fetch(signal?: AbortSignal): Promise<readonly ApiResource[]> {
    const get = (path: string, accept = 'application/json'): Promise<unknown> =>
      this.#client.request<unknown>({
        method: 'GET',
        path,
        headers: { accept },
        ...(signal ? { signal } : {}),
      });
    const [core, groups] = await Promise.all([
      get('/api', aggregatedDiscoveryAccept),
      get('/apis', aggregatedDiscoveryAccept),
    ]);
    const parts = await Promise.all(
      [core, groups].map(async (doc, i) => {
        if (isAggregated(doc)) return parseAggregated(doc);
        const prefix = i === 0 ? '/api' : '/apis';
        const lists = await Promise.all(
          legacyGroupVersions(doc).map(async ({ group, version, preferred }) => {
            const path = group === '' ? `${prefix}/${version}` : `${prefix}/${group}/${version}`;
            try {
              return parseResourceList(await get(path), group, version, preferred);
            } catch (err) {
              this.#logger.warn(
                { path, err: String(err) },
                'discovery of a group version failed; skipping it',
              );
              return [];
            }
          }),
        );
        return lists.flat();
      }),
    );
    this.#cache = parts.flat();
    this.#fetchedAt = this.#clock.now();
    return this.#cache;
  }
}

/** The resolved name; undefined when nothing matches; the error when the subresource is unknown. */
function tryMatch(
  resources: readonly ApiResource[],
  input: string,
): ResolvedResource | UnknownResourceError | undefined {
  try {
    return matchResource(resources, input);
  } catch (err) {
    if (err instanceof UnknownResourceError) return err;
    throw err;
  }
}
