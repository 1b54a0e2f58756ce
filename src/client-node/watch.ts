/**
 * client-node's `Watch` with Raven's watcher underneath: `watch(path, queryParams, callback,
 * done)` resolves to an `AbortController`, the callback gets `(type, object, { type, object })`
 * and `done` is called once, when the watch ends.
 *
 * It ends only when the caller aborts it (`done` then gets the signal's `AbortError`). client-node's
 * watch is one HTTP request: it ends, calling `done`, when the server closes the stream (every
 * few minutes), when the connection breaks and on any error, and the caller starts another. This
 * one resumes from the last resourceVersion after each of those, relists on 410 (objects deleted
 * meanwhile arrive as `DELETED` with their last known state) and finds dead connections.
 * A failure it recovers from reaches the callback as an `ERROR` event carrying a `Status`, as the
 * apiserver reports errors inside a watch; 410 is handled without one.
 *
 * Query parameters: `resourceVersion` (start there; none, `''` or `'0'` lists first and delivers
 * every existing object as `ADDED`, as the server does for a watch without one), `labelSelector`,
 * `fieldSelector`, `allowWatchBookmarks` (deliver `BOOKMARK`s), `sendInitialEvents` (with
 * bookmarks, the initial-events-end `BOOKMARK` after the existing objects), and `timeoutSeconds`,
 * `resourceVersionMatch`, `pretty`, `watch`, which are accepted and have no effect (streams are
 * resumed anyway). Any other parameter is refused, naming the valid ones.
 */
import { errorKind, isExpired } from '../errors/classify.js';
import { isRavenError } from '../errors/is-raven-error.js';
import { RavenError } from '../errors/raven-error.js';
import { watch, type WatcherOptions } from '../watch/watcher.js';
import { CallbackFailures } from './callback-failure.js';
import { acquireClient, releaseClient, type KubeConfigLike } from './kube-config.js';

export type WatchQuery = Record<string, string | number | boolean | undefined>;
/** The callback: the event's type, its object, and the whole event as the server would send it. */
export type WatchCallback = (phase: string, apiObj: any, watchObj?: any) => void; // eslint-disable-line @typescript-eslint/no-explicit-any
export type WatchDone = (err: any) => void; // eslint-disable-line @typescript-eslint/no-explicit-any

const USED = [
  'resourceVersion',
  'labelSelector',
  'fieldSelector',
  'allowWatchBookmarks',
  'sendInitialEvents',
];
const IGNORED = ['timeoutSeconds', 'resourceVersionMatch', 'pretty', 'watch'];
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/**
 * A watch with client-node's interface, that never ends until aborted.
 *
 * @example
 * const req = await new Watch(kc).watch('/api/v1/namespaces', { allowWatchBookmarks: true },
 *   (type, obj) => console.log(type, obj.metadata?.name), (err) => console.log('ended', err));
 * req.abort();
 */
export class Watch {
  /** client-node's marker for a server-side close; this watch resumes instead of ending. */
  static SERVER_SIDE_CLOSE: object = { error: 'Connection closed on server' };
  config: KubeConfigLike;

  constructor(config: KubeConfigLike) {
    this.config = config;
  }

  async watch(
    path: string,
    queryParams: WatchQuery,
    callback: WatchCallback,
    done: WatchDone,
  ): Promise<AbortController> {
    const query = readQuery(queryParams);
    const kc = this.config;
    const client = await acquireClient(kc);
    const controller = new AbortController();
    const resourceVersion = stringOf(query.resourceVersion);
    const watcher = watch({
      transport: client,
      path,
      signal: controller.signal,
      ...selectors(query),
      ...(resourceVersion === undefined || resourceVersion === '' || resourceVersion === '0'
        ? {}
        : { resume: { resourceVersion, objects: [] } }),
    });
    const bookmarks = query.allowWatchBookmarks === true || query.allowWatchBookmarks === 'true';
    const initialEnd = bookmarks && (query.sendInitialEvents === true || query.sendInitialEvents === 'true');
    const failures = new CallbackFailures(`the watch of ${path}`);
    const send = (type: string, object: unknown): void =>
      failures.call(() => callback(type, object, { type, object }));
    void (async () => {
      // The watcher ends only when aborted; anything else that ends it is what `done` reports.
      let ended: unknown = undefined;
      try {
        for await (const event of watcher) {
          switch (event.type) {
            case 'initial':
            case 'added':
              send('ADDED', event.object);
              break;
            case 'modified':
              send('MODIFIED', event.object);
              break;
            case 'deleted':
              send('DELETED', event.object);
              break;
            case 'bookmark':
              if (bookmarks) send('BOOKMARK', { metadata: { resourceVersion: event.resourceVersion } });
              break;
            case 'synced':
              if (initialEnd && !event.relist) {
                send('BOOKMARK', {
                  metadata: {
                    resourceVersion: event.resourceVersion,
                    annotations: { [INITIAL_EVENTS_END]: 'true' },
                  },
                });
              }
              break;
            case 'error':
              if (!isExpired(event.error)) send('ERROR', statusOf(event.error));
              break;
            case 'listing':
              break;
          }
        }
      } catch (err) {
        ended = err;
      } finally {
        failures.summarize();
        await releaseClient(kc);
        done(ended ?? controller.signal.reason);
      }
    })();
    return controller;
  }
}

function readQuery(queryParams: WatchQuery | undefined): WatchQuery {
  const query = queryParams ?? {};
  for (const key of Object.keys(query)) {
    if (!USED.includes(key) && !IGNORED.includes(key)) {
      throw new RavenError(
        'ERR_INVALID_ARGUMENT',
        `watch: query parameter ${JSON.stringify(key)} is not supported; valid: ${[...USED, ...IGNORED].join(', ')}`,
      );
    }
  }
  return query;
}

function selectors(query: WatchQuery): Pick<WatcherOptions, 'labelSelector' | 'fieldSelector'> {
  const labelSelector = stringOf(query.labelSelector);
  const fieldSelector = stringOf(query.fieldSelector);
  return {
    ...(labelSelector === undefined ? {} : { labelSelector }),
    ...(fieldSelector === undefined ? {} : { fieldSelector }),
  };
}

function stringOf(value: string | number | boolean | undefined): string | undefined {
  return value === undefined ? undefined : String(value);
}

/** A failure as the `Status` an apiserver puts in an `ERROR` event. */
function statusOf(err: Error): Record<string, unknown> {
  if (isRavenError(err, 'ERR_API'))
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, ...err.status, code: err.statusCode };
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: err.message,
    reason: errorKind(err),
  };
}
