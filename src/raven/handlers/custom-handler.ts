/**
 * Custom handlers: a config entry names a JavaScript or TypeScript module (compiled to JS, or run
 * under a TypeScript loader) that exports a handler, as the seed design registered a translate
 * function per watcher. The daemon imports it, starts it with the shared context, and hands it the
 * routed changes one at a time, in order. A handler that throws is isolated: logged, counted, and
 * the next change is delivered.
 *
 * The module exports, as `default` or as `handler`, either a handler object or a factory
 * `(options) => handler` (sync or async):
 *
 * ```js
 * export default {
 *   async start(ctx) { ctx.logger.info({}, 'ready'); },
 *   async handle(event, ctx) { if (event.type === 'deleted') await cleanUp(event.object, ctx); },
 *   async stop() {},
 * };
 * ```
 *
 * Handlers should be level-triggered: `ctx.cache(watcher)` reads every watched object as it is now.
 * Handler deliveries are not checkpointed; after a restart a handler should reconcile from the cache.
 */
import { pathToFileURL } from 'node:url';
import type { KubeClient } from '../../client/kube-client.js';
import type { Discovery } from '../../client/discovery.js';
import type { KubeObject } from '../../client/kube-object.js';
import { ConfigError, RavenError } from '../../errors/raven-error.js';
import type { Logger } from '../../util/logger.js';
import type { ChangeEvent } from '../model/change-event.js';

/** Read access to one watcher's current objects. */
export interface CacheView {
  get(namespace: string | undefined, name: string): KubeObject | undefined;
  list(): KubeObject[];
}

export interface HandlerContext {
  /** The handler's name in the config. */
  name: string;
  options: Readonly<Record<string, unknown>>;
  client: KubeClient;
  discovery: Discovery;
  logger: Logger;
  /**
   * A watcher's current objects (redacted as events are). Throws a `RavenError`:
   * `ERR_INVALID_ARGUMENT` for a name no configured watcher has, `ERR_INVALID_STATE` for a watcher
   * that is not watching now (not yet: handlers start before the watchers; or no longer).
   */
  cache(watcher: string): CacheView;
  /** Aborts when the daemon stops. */
  signal: AbortSignal;
}

export interface RavenHandler {
  start?(context: HandlerContext): void | Promise<void>;
  handle(event: ChangeEvent, context: HandlerContext): void | Promise<void>;
  stop?(): void | Promise<void>;
}

type Factory = (options: Readonly<Record<string, unknown>>) => RavenHandler | Promise<RavenHandler>;

function isHandler(value: unknown): value is RavenHandler {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { handle?: unknown }).handle === 'function'
  );
}

/** Import the module and obtain its handler; errors name the config entry and what was expected. */
export async function loadHandler(
  module: string,
  options: Readonly<Record<string, unknown>>,
  path: string,
): Promise<RavenHandler> {
  let loaded: Record<string, unknown>;
  try {
    const specifier = module.startsWith('/') ? pathToFileURL(module).href : module;
    loaded = (await import(specifier)) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(
      `cannot load handler module ${module}: ${error instanceof Error ? error.message : String(error)}`,
      {
        path,
        cause: error,
      },
    );
  }
  const exported = loaded.default ?? loaded.handler;
  const candidate: unknown = typeof exported === 'function' ? await (exported as Factory)(options) : exported;
  if (!isHandler(candidate)) {
    throw new ConfigError(
      `handler module ${module} must export (as default or \`handler\`) an object with a handle(event, context) method, or a function returning one`,
      { path },
    );
  }
  return candidate;
}

/** What `context.cache` reads from a running watcher (its pipeline, `pipeline/watcher-pipeline.ts`). */
export interface CacheSource {
  get(namespace: string | undefined, name: string): KubeObject | undefined;
  objects(): KubeObject[];
}

/**
 * `context.cache(watcher)` for `handler`: a view of `watcher`'s objects from `running`, or the
 * error that says why there is none (`configured`: every watcher's name in the config).
 */
export function handlerCache(
  handler: string,
  watcher: string,
  running: ReadonlyMap<string, CacheSource>,
  configured: readonly string[],
): CacheView {
  const source = running.get(watcher);
  if (source !== undefined)
    return { get: (namespace, name) => source.get(namespace, name), list: () => source.objects() };
  const call = `handler ${handler}: context.cache(${JSON.stringify(watcher)})`;
  if (!configured.includes(watcher))
    throw new RavenError(
      'ERR_INVALID_ARGUMENT',
      `${call}: no watcher has that name; the configured watchers are ${configured.length === 0 ? 'none' : configured.join(', ')}`,
    );
  throw new RavenError(
    'ERR_INVALID_STATE',
    `${call}: the watcher is not watching now (handlers start before the watchers, and stop after them); read the cache while handling a change`,
  );
}

/** One handler behind its own FIFO: in order, one at a time, failures isolated. */
export class HandlerRunner {
  readonly name: string;
  readonly #handler: RavenHandler;
  readonly #context: HandlerContext;
  readonly #onError: (error: unknown, event: ChangeEvent) => void;
  #tail: Promise<void> = Promise.resolve();
  #pending = 0;

  constructor(
    name: string,
    handler: RavenHandler,
    context: HandlerContext,
    onError: (error: unknown, event: ChangeEvent) => void,
  ) {
    this.name = name;
    this.#handler = handler;
    this.#context = context;
    this.#onError = onError;
  }

  get pending(): number {
    return this.#pending;
  }

  async start(): Promise<void> {
    await this.#handler.start?.(this.#context);
  }

  push(event: ChangeEvent): void {
    this.#pending++;
    this.#tail = this.#tail.then(async () => {
      try {
        await this.#handler.handle(event, this.#context);
      } catch (error) {
        this.#onError(error, event);
      } finally {
        this.#pending--;
      }
    });
  }

  /** Wait for queued changes (up to the caller's deadline), then stop the handler. */
  async stop(): Promise<void> {
    await this.#tail;
    await this.#handler.stop?.();
  }
}
