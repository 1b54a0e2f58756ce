/**
 * list+watch that never silently stops and never loses or invents a change.
 *
 * A {@link Watcher} is an async iterable of {@link WatcherEvent}s for one collection (one path, one
 * pair of selectors). It lists (paginated, or through the streaming initial list where the server
 * serves it), then watches from the list's resourceVersion, resumes from the last resourceVersion
 * after every disconnect, relists on 410 and reconciles (tombstones for what vanished, nothing for
 * what did not change), and backs off on failures. It never ends by itself: errors are yielded as
 * `error` events while it recovers, and `status()` tells where it is. It ends when its signal aborts,
 * `close()` is called or the consumer stops iterating.
 *
 * The transitions are in `watcher-state.ts`; this file runs them.
 */
import { RavenError, TransportError } from '../errors/raven-error.js';
import { errorKind, isInvalid, isRetryable } from '../errors/classify.js';
import { systemClock, sleep, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import type { ListMeta } from 'kubernetes-types/meta/v1.js';
import type { BackoffOptions } from '../util/backoff.js';
import { ListDecoder } from './decode/decode-list.js';
import { CborSequenceSplitter } from './decode/cbor-sequence.js';
import { decodeCborList } from './decode/decode-cbor-list.js';
import { itemTypeOf } from './decode/item-type.js';
import {
  checkCborStreamEnd,
  checkStreamEnd,
  decodeCborWatchItem,
  decodeWatchLine,
  type DecodeWatchOptions,
} from './decode/decode-watch-events.js';
import { LineSplitter } from './decode/line-splitter.js';
import {
  objectPeekOf,
  PEEK_FIELD,
  peekFields,
  type ObjectPeek,
  type PeekFields,
  type WatchEventPeek,
} from './decode/peek.js';
import type { KubeObject } from './decode/watch-event.js';
import { guardInactivity } from './inactivity.js';
import { KnownObjects, type Known, type ObjectSource } from './known-objects.js';
import { metadataKey } from '../client/object-key.js';
import { ReconnectPolicy } from './reconnect-policy.js';
import type { WatcherEvent, WatcherPhase, WatcherStatus } from './watcher-events.js';
import { checkShard, inShard, shardSelector, shardTest, type Shard } from './shard/shard.js';
import { initialState, transition, type ListFrom, type Outcome, type WatcherState } from './watcher-state.js';

/** The one thing a watcher needs from a client: open a streamed GET. `KubeClient` provides it. */
export interface WatchTransport {
  stream(request: {
    path: string;
    query?: Record<string, string | number | boolean | undefined>;
    headers?: Record<string, string>;
    signal?: AbortSignal;
  }): Promise<{
    statusCode: number;
    headers?: Record<string, string | string[] | undefined>;
    body: AsyncIterable<Uint8Array>;
  }>;
  /**
   * The server's version, when the transport can tell (KubeClient asks `/version` once); it
   * chooses the default initial list (see `WatcherOptions.watchList`).
   */
  serverVersion?(signal?: AbortSignal): Promise<{ major: number; minor: number } | undefined>;
}

/**
 * From this version on, the default initial list is one list in one page: the apiserver serves a
 * consistent list from its watch cache (ConsistentListFromCache, on by default since 1.31) and
 * encodes it item by item as it writes (StreamingCollectionEncodingToJSON, since 1.33), so it
 * holds no whole response in memory, and it costs the apiserver about half the CPU of the
 * streaming list's per-object watch events (docs/watch.md, "Which initial list").
 */
export const WHOLE_LIST_SINCE = { major: 1, minor: 33 } as const;

/**
 * The encodings a watcher can ask for. `cbor` asks for CBOR first and JSON second
 * (`Accept: application/cbor, application/json;q=0.9`) and decodes whichever the server answers:
 * an apiserver without the `CBORServingAndStorage` feature answers JSON, and nothing else changes.
 */
export type WatchEncoding = 'json' | 'cbor';

const ACCEPT: Record<WatchEncoding, string | undefined> = {
  json: undefined,
  cbor: 'application/cbor, application/json;q=0.9',
};

/** Whether a response is CBOR (`application/cbor` for a list, `application/cbor-seq` for a watch). */
function isCbor(headers: Record<string, string | string[] | undefined> | undefined): boolean {
  const type = headers?.['content-type'];
  const value = Array.isArray(type) ? type[0] : type;
  return value !== undefined && /^application\/cbor(-seq)?\s*(;|$)/i.test(value);
}

export interface WatcherOptions {
  transport: WatchTransport;
  /** Collection path, e.g. `/api/v1/namespaces/default/pods` or `/apis/apps/v1/deployments`. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Client-side scope filter, consulted before an object is parsed (namespace patterns). */
  accept?: (peek: ObjectPeek) => boolean;
  /**
   * The members of the peek `accept` reads; default all four. On a live watch the peek then reads
   * only these (with `resourceVersion`, and the shard's field when the watcher filters by shard)
   * and stops reading an object's metadata as soon as it has them.
   */
  acceptReads?: readonly (keyof ObjectPeek)[];
  /**
   * Watch one shard only: the objects whose 64-bit FNV-1a hash of `metadata.uid` (or
   * `metadata.namespace`) falls in `range` (`shard.ts`). Before its first request the watcher
   * asks the server with `shardSelector` (one list of one item): a server that echoes the
   * selector in `metadata.shardInfo` filters every list and watch; otherwise (the feature gate
   * off, an older server, a refused selector) the watcher filters by the same hash before parsing
   * each object. Both select the same objects; `shardFiltering` says which is in use.
   */
  shard?: Shard;
  /**
   * Items per list page. Default: 500, or the whole collection in one page where the default
   * initial list is a list (see `watchList`).
   */
  pageSize?: number;
  /**
   * `true`: try the streaming initial list (sendInitialEvents) first, falling back to list+watch.
   * `false`: list+watch. Default: list+watch with the list in one page where the transport tells
   * the server's version and it is 1.33 or later ({@link WHOLE_LIST_SINCE}); elsewhere `true`.
   */
  watchList?: boolean;
  /** Drop metadata.managedFields before parsing (20-40% of a typical object). Default false. */
  dropManagedFields?: boolean;
  /**
   * Ask the server for CBOR (`'cbor'`) or JSON (`'json'`, the default). CBOR is about 18 % fewer
   * bytes on the wire but costs 2-3 times the CPU to decode in JavaScript (docs/benchmarks.md):
   * choose it when bandwidth, not CPU, is what is short. A server that does not serve CBOR answers
   * JSON, which is decoded as usual.
   */
  encoding?: WatchEncoding;
  /** Keep every object so `modified` carries `previous` and tombstones the last state. Default true. */
  keepObjects?: boolean;
  /**
   * Compare each object's managedFields entries with its previous state's, so `modified` carries
   * `managers`, the entries that changed (who wrote it; see `changedBy`). Works with
   * `dropManagedFields` (the entries are read from the bytes before they are cut), except for a
   * CBOR watch. Costs a scan of the managedFields bytes per object and 12 bytes per entry kept per
   * object. Default false: a library watch pays for it only when asked (the daemon and the CLI
   * ask).
   */
  fieldManagers?: boolean;
  /**
   * Called with each object a watch stream delivers (not a list's items, not a CBOR stream's) and
   * the JSON bytes it was parsed from, for a consumer that forwards objects as JSON and would
   * otherwise serialise them again (the daemon's records). See `DecodeWatchOptions.objectJson`:
   * the server's bytes, the same JSON value as `JSON.stringify(object)`. Called before the
   * object's event is yielded, for every object decoded, delivered or not (a repeat is dropped
   * after it). Default: none, and nothing is copied.
   */
  objectJson?: ((object: KubeObject, json: Buffer) => void) | undefined;
  /** Watch timeoutSeconds is drawn from [min, max) per stream so streams end and resume spread out. Default 300-600. */
  timeoutSeconds?: { min: number; max: number };
  /**
   * No byte (event or bookmark) for this long means the stream is dead. Default 75 s: the apiserver
   * sends a bookmark about once a minute on every watch, plus a margin. Over HTTP/2 (the default
   * against a TLS apiserver) the client's PING health check finds a dead connection sooner (within 25 s).
   */
  inactivityTimeoutMs?: number;
  /**
   * A streaming initial list (sendInitialEvents) that goes this long without a byte before its
   * initial-events-end bookmark is taken as a server that ignores the parameter: the watcher falls
   * back to list+watch for the rest of its life. Default 15 s.
   */
  initialEventsTimeoutMs?: number;
  /** A stream that lived this long counts as healthy even with no event: a normal end resumes at once. Default 30 s. */
  stableMs?: number;
  /**
   * Resume instead of listing: start watching at `resourceVersion`, knowing `objects` as the state
   * of the collection at that point (from a checkpoint, say). The server replays every change after
   * it. The watcher starts synced and yields no `initial` events; when the resourceVersion has
   * expired (410) it relists, and the relist is reconciled against `objects` like any relist
   * (`listing` with `relist: true`, then added / modified / tombstones, then `synced`).
   */
  resume?: { resourceVersion: string; objects: Iterable<KubeObject> };
  /** Backoff after failed answers (5xx, in-stream errors). Default 0.8 s to 30 s; see `reconnect-policy.ts`. */
  backoff?: BackoffOptions;
  /** Backoff after connection-level failures (refused, reset, dead). Default 100 ms to 1 s. */
  connectBackoff?: BackoffOptions;
  clock?: Clock;
  random?: () => number;
  logger?: Logger;
  signal?: AbortSignal;
}

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

type Query = Record<string, string | number | boolean | undefined>;

/** One HTTP request of the watcher: aborted with it, or by the inactivity deadline (then `idle` says why). */
interface PendingRequest {
  signal: AbortSignal;
  /** Why the inactivity deadline killed the request, if it did. */
  idle: TransportError | undefined;
  expire(err: TransportError): void;
  done(): void;
}

/**
 * Start watching. Iterate the result to receive events; it runs until aborted.
 *
 * @example
 * const pods = watch({ transport: client, path: '/api/v1/namespaces/shop/pods', signal });
 * for await (const event of pods) {
 *   if (event.type === 'modified') console.log(event.object.metadata?.name, 'was', event.previous);
 * }
 */
export function watch<T extends KubeObject = KubeObject>(options: WatcherOptions): Watcher<T> {
  return new Watcher<T>(options);
}

export class Watcher<T extends KubeObject = KubeObject> implements AsyncIterable<WatcherEvent<T>> {
  readonly #o: WatcherOptions;
  /** The pre-parse filter: `accept`, and the shard's hash range when the server does not filter. */
  #accept: ((peek: ObjectPeek) => boolean) | undefined;
  /** The members of the peek {@link #accept} reads, and the resourceVersion. */
  #acceptReads: PeekFields;
  #shardFiltering: 'server' | 'client' | undefined;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #log: Logger;
  readonly #policy: ReconnectPolicy;
  readonly #known: KnownObjects<T>;
  readonly #abort = new AbortController();
  readonly #started: number;
  #watchList: boolean;
  /** The `limit` of a list page; undefined: the whole collection in one page. */
  #pageSize: number | undefined;
  #phase: WatcherPhase = 'listing';
  #synced = false;
  #resourceVersion: string | undefined;
  #lastError: WatcherStatus['lastError'];
  #lastEventAt: number | undefined;
  #lists = 0;
  /** A `listing` was announced and its `synced` has not come yet. */
  #listOpen = false;
  #streams = 0;
  #iterating = false;

  constructor(options: WatcherOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#log = (options.logger ?? silentLogger).child({ path: options.path });
    this.#policy = new ReconnectPolicy({
      random: this.#random,
      ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
      ...(options.connectBackoff === undefined ? {} : { connectBackoff: options.connectBackoff }),
    });
    this.#known = new KnownObjects<T>({
      keepObjects: options.keepObjects ?? true,
      dropManagedFields: options.dropManagedFields === true,
      fieldManagers: options.fieldManagers ?? false,
    });
    this.#watchList = options.watchList ?? true;
    this.#pageSize = options.pageSize ?? 500;
    this.#started = this.#clock.now();
    this.#accept = options.accept;
    this.#acceptReads =
      PEEK_FIELD.resourceVersion | peekFields(options.acceptReads ?? ['name', 'namespace', 'uid']);
    const shard = options.shard === undefined ? undefined : checkShard(options.shard);
    if (options.resume !== undefined) {
      for (const object of options.resume.objects)
        if (shard === undefined || inShard(shard, objectPeekOf(object)))
          this.#known.seed(metadataKey(object.metadata), object as T);
      this.#resourceVersion = options.resume.resourceVersion;
      this.#synced = true;
    }
    options.signal?.addEventListener('abort', () => this.#abort.abort(options.signal?.reason), {
      once: true,
    });
  }

  /** A snapshot of where the watcher is. */
  status(): WatcherStatus {
    const since = this.#lastEventAt ?? this.#started;
    return {
      phase: this.#phase,
      synced: this.#synced,
      resourceVersion: this.#resourceVersion,
      lastError: this.#lastError,
      lastEventAt: this.#lastEventAt,
      secondsSinceLastEvent: Math.max(0, (this.#clock.now() - since) / 1000),
      // A resumed watcher's first list is already a relist.
      relists: Math.max(0, this.#lists - (this.#o.resume === undefined ? 1 : 0)),
      reconnects: Math.max(0, this.#streams - 1),
      failures: this.#policy.failures,
      watchList: this.#watchList,
      objects: this.#known.size,
    };
  }

  /**
   * With `shard`: `'server'` once the apiserver confirmed it filters by the shard selector,
   * `'client'` when the watcher filters by the hash itself; undefined before the first request
   * and without a shard.
   */
  get shardFiltering(): 'server' | 'client' | undefined {
    return this.#shardFiltering;
  }

  /** Stop: the current request is aborted and iteration ends. */
  close(): void {
    this.#abort.abort(new Error('watcher closed'));
  }

  [Symbol.asyncIterator](): AsyncIterator<WatcherEvent<T>> {
    if (this.#iterating)
      throw new RavenError(
        'ERR_INVALID_STATE',
        'a Watcher can be iterated once; share it through an informer',
      );
    this.#iterating = true;
    return this.#run();
  }

  get #signal(): AbortSignal {
    return this.#abort.signal;
  }

  #aborted(): boolean {
    return this.#abort.signal.aborted;
  }

  async *#run(): AsyncGenerator<WatcherEvent<T>, void, undefined> {
    let state: WatcherState =
      this.#o.resume === undefined
        ? initialState(this.#watchList)
        : { kind: 'watch', resourceVersion: this.#o.resume.resourceVersion };
    try {
      if (this.#o.watchList === undefined) await this.#chooseInitialList();
      if (this.#o.resume === undefined) state = initialState(this.#watchList);
      if (this.#o.shard !== undefined) await this.#probeShard(this.#o.shard);
      while (state.kind !== 'stopped' && !this.#aborted()) {
        const outcome = yield* this.#step(state);
        if (outcome.kind === 'notServed') {
          this.#log.info(
            { reason: outcome.reason },
            'the server does not serve the streaming initial list; using list+watch from now on',
          );
          this.#watchList = false;
        }
        // A streaming initial list refused as invalid (400/422: no WatchList feature) is a fallback,
        // not a failure: the plain list that follows answers for the request.
        const refused =
          outcome.kind === 'failed' &&
          state.kind === 'watchList' &&
          outcome.listed !== true &&
          isInvalid(outcome.error);
        if (refused) {
          this.#log.info(
            { err: outcome.error instanceof Error ? outcome.error.message : String(outcome.error) },
            'the server does not serve the streaming initial list; using list+watch from now on',
          );
          this.#watchList = false;
        } else if (outcome.kind === 'failed' && !this.#aborted()) {
          const err = outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error));
          this.#lastError = { message: err.message, kind: errorKind(err), at: this.#clock.now() };
        }
        const next = transition(state, this.#aborted() ? { kind: 'aborted' } : outcome, {
          resourceVersion: this.#resourceVersion,
          watchList: this.#watchList,
          stableMs: this.#o.stableMs ?? 30_000,
          nextDelay: (error) => this.#policy.delayAfter(error),
        });
        if (outcome.kind === 'failed' && !refused && !this.#aborted()) {
          if (next.kind === 'backoff') {
            // Missing RBAC, a 404 or repeated failures must not look like a quiet stream.
            this.#phase = this.#policy.failures >= 3 || !isTransient(outcome.error) ? 'failing' : 'backoff';
          }
          const err = outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error));
          // The one log line for this failure: what failed, in which phase, and what happens next.
          // At debug: a retry a second while the server is down would flood a log at info. The
          // consumer reports outages (`outage-tracker.ts`: a line at the start, every 30 s, at the end).
          this.#log.debug(
            {
              err: err.message,
              kind: errorKind(err),
              phase: this.#phase,
              next: next.kind === 'backoff' ? next.then.kind : next.kind,
              ...(next.kind === 'backoff' ? { retryInMs: next.delayMs } : {}),
            },
            'watch failed; recovering',
          );
          yield { type: 'error', error: err, status: this.status() };
        }
        state = next;
      }
    } finally {
      this.#phase = 'stopped';
      this.#abort.abort(new Error('watcher stopped'));
    }
  }

  /**
   * Run one state. Not a generator itself: the one it returns is delegated to straight from
   * `#run`, so an event passes through two generators between the socket and the consumer.
   */
  #step(state: WatcherState): AsyncGenerator<WatcherEvent<T>, Outcome, undefined> {
    switch (state.kind) {
      case 'list':
        this.#phase = 'listing';
        return this.#list(state.from, state.paged);
      case 'watchList':
        this.#phase = 'listing';
        return this.#stream(this.#watchListQuery(state.from), true);
      case 'watch':
        return this.#stream({ resourceVersion: state.resourceVersion }, false);
      case 'backoff':
        if (this.#phase !== 'failing') this.#phase = 'backoff';
        return this.#wait(state.delayMs);
      case 'stopped':
        return this.#wait(undefined);
      default: {
        const unreachable: never = state;
        return unreachable;
      }
    }
  }

  /** Wait `ms` (a backoff); undefined: nothing to wait for, the watcher is stopping. */
  // eslint-disable-next-line require-yield -- a step that yields no event
  async *#wait(ms: number | undefined): AsyncGenerator<WatcherEvent<T>, Outcome, undefined> {
    if (ms === undefined) return { kind: 'aborted' };
    try {
      await sleep(this.#clock, ms, this.#signal);
      return { kind: 'waited' };
    } catch {
      return { kind: 'aborted' };
    }
  }

  #selectors(): Query {
    return {
      labelSelector: this.#o.labelSelector,
      fieldSelector: this.#o.fieldSelector,
      shardSelector:
        this.#shardFiltering === 'server' && this.#o.shard !== undefined
          ? shardSelector(this.#o.shard)
          : undefined,
    };
  }

  /**
   * Ask the server for one item of the shard. A list that echoes the selector in
   * `metadata.shardInfo` proves the server filters lists and watches alike; anything else (no
   * echo: the gate is off or the server predates it; a refusal; a failure) leaves the filtering
   * to the watcher, which is always correct, only costlier.
   */
  async #probeShard(shard: Shard): Promise<void> {
    const selector = shardSelector(shard);
    let echoed: unknown;
    let failure: string | undefined;
    try {
      const response = await this.#o.transport.stream({
        path: this.#o.path,
        query: {
          labelSelector: this.#o.labelSelector,
          fieldSelector: this.#o.fieldSelector,
          shardSelector: selector,
          limit: 1,
        },
        signal: this.#signal,
      });
      const chunks: Uint8Array[] = [];
      for await (const chunk of response.body) chunks.push(chunk);
      const list = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        metadata?: { shardInfo?: { selector?: unknown } };
      };
      echoed = list.metadata?.shardInfo?.selector;
    } catch (error) {
      if (this.#aborted()) return;
      failure = error instanceof Error ? error.message : String(error);
    }
    const accept = this.#o.accept;
    if (typeof echoed === 'string' && echoed !== '') {
      this.#shardFiltering = 'server';
      this.#log.info({ shardSelector: selector }, 'the server filters by the shard selector');
      return;
    }
    this.#shardFiltering = 'client';
    const inThisShard = shardTest(shard);
    this.#accept = (peek) => inThisShard(peek) && (accept === undefined || accept(peek));
    this.#acceptReads =
      PEEK_FIELD[shard.field] | (accept === undefined ? PEEK_FIELD.resourceVersion : this.#acceptReads);
    this.#log.info(
      { shardSelector: selector, ...(failure === undefined ? {} : { err: failure }) },
      failure === undefined
        ? 'the server does not echo the shard selector (no metadata.shardInfo); filtering by hash before parsing'
        : 'could not ask the server to filter by shard; filtering by hash before parsing',
    );
  }

  /** The default initial list: see {@link WatcherOptions.watchList}. */
  async #chooseInitialList(): Promise<void> {
    // A transport that cannot say (or fails to) leaves the streaming list, which falls back by itself.
    const version = await this.#o.transport.serverVersion?.(this.#signal).catch(() => undefined);
    if (version === undefined) return;
    const { major, minor } = WHOLE_LIST_SINCE;
    if (version.major > major || (version.major === major && version.minor >= minor)) {
      this.#watchList = false;
      this.#pageSize = this.#o.pageSize;
    }
  }

  #watchListQuery(from: ListFrom): Query {
    return {
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
      resourceVersion: from.kind === 'notOlderThan' ? from.resourceVersion : '',
    };
  }

  /**
   * Reconcile one listed object (parsed from `text`, a whole watch event when `inEvent`) against
   * what is known; appends what changed to `out`.
   */
  #reconcile(
    object: T,
    source: ObjectSource,
    inEvent: boolean,
    relist: boolean,
    out: WatcherEvent<T>[],
  ): void {
    const key = metadataKey(object.metadata);
    let known = this.#known.get(key);
    const uid = object.metadata?.uid;
    if (known !== undefined && known.uid !== undefined && uid !== undefined && known.uid !== uid) {
      // The list shows an incarnation kept beside the entry (a resume told of both): it is the
      // entry now, and the other is tombstoned at the end of the list, unless listed after all.
      known = this.#known.promote(key, uid) ?? known;
    }
    if (known === undefined) {
      this.#known.listed(this.#known.set(key, object, source, inEvent));
      out.push(relist ? { type: 'added', object } : { type: 'initial', object });
      return;
    }
    this.#known.listed(known);
    if (known.uid !== undefined && uid !== undefined && known.uid !== uid) {
      // Deleted and re-created under the same name while we were not watching.
      out.push({ type: 'deleted', object: this.#known.lastState(key, known), tombstone: true });
      this.#known.update(known, object, source, inEvent);
      out.push({ type: 'added', object });
      return;
    }
    if (known.resourceVersion === object.metadata?.resourceVersion) return;
    out.push(this.#modified(object, known, source, inEvent));
  }

  /**
   * A `modified` event, and `known` updated to `object`: `previous` is parsed from what `known`
   * held, when first read; `managers` are the managedFields entries that changed.
   */
  #modified(object: T, known: Known, source: ObjectSource, inEvent: boolean): WatcherEvent<T> {
    const bytes = known.bytes;
    const before = bytes === undefined ? (known.object as T | undefined) : undefined;
    const previous = bytes === undefined ? undefined : this.#known.previous(known);
    const managers = this.#known.update(known, object, source, inEvent);
    const extra = managers === undefined ? {} : { managers };
    if (previous === undefined) return { type: 'modified', object, previous: before, ...extra };
    return {
      type: 'modified',
      object,
      get previous() {
        return previous();
      },
      ...extra,
    };
  }

  /** After a complete (re)list: everything known but not seen by it is gone. */
  #tombstones(): WatcherEvent<T>[] {
    const gone: WatcherEvent<T>[] = this.#known.unlisted().map(([key, known]) => {
      this.#known.delete(key);
      return { type: 'deleted', object: this.#known.lastState(key, known), tombstone: true };
    });
    // A list shows one incarnation of a name: any other kept beside it is gone.
    for (const [key, known] of this.#known.takeOlder())
      gone.push({ type: 'deleted', object: this.#known.lastState(key, known), tombstone: true });
    return gone;
  }

  #listFilter(): (peek: ObjectPeek) => boolean {
    return (peek) => {
      if (this.#accept !== undefined && !this.#accept(peek)) return false;
      return !this.#known.unchanged(peek, true);
    };
  }

  async *#list(from: ListFrom, paged: boolean): AsyncGenerator<WatcherEvent<T>, Outcome, undefined> {
    const relist = this.#synced;
    yield* this.#listing(relist);
    this.#known.beginList();
    let continueToken: string | undefined;
    let continued = false;
    for (;;) {
      const query: Query = { ...this.#selectors(), limit: paged ? this.#pageSize : undefined };
      if (continueToken !== undefined) query.continue = continueToken;
      else if (from.kind === 'notOlderThan') {
        query.resourceVersion = from.resourceVersion;
        query.resourceVersionMatch = 'NotOlderThan';
      }
      let resourceVersion: string | undefined;
      const request = this.#request();
      try {
        const { body, cbor } = await this.#open(query, request);
        this.#policy.connected();
        const filter = this.#accept !== undefined || this.#known.size > 0 ? this.#listFilter() : undefined;
        const out: WatcherEvent<T>[] = [];
        let metadata: ListMeta;
        if (cbor) {
          // A CBOR list is one data item: it is read whole, then taken apart item by item.
          const list = await decodeCborList<T>(body, {
            dropManagedFields: this.#o.dropManagedFields === true,
            filter,
          });
          const { kind, apiVersion } = list.result;
          this.#known.itemType = itemTypeOf(kind, apiVersion);
          for (const item of list.items) {
            this.#reconcile(item.object, item, false, relist, out);
            for (const event of out) yield event;
            out.length = 0;
          }
          metadata = list.result.metadata;
        } else {
          const decoder = new ListDecoder<T>({
            dropManagedFields: this.#o.dropManagedFields === true,
            filter,
          });
          for await (const chunk of body) {
            for (const item of decoder.push(chunk)) {
              // Known once the list's kind (which leads the body) was read; kept bytes need it.
              this.#known.itemType ??= decoder.itemType;
              this.#reconcile(item.object, item, false, relist, out);
              for (const event of out) yield event;
              out.length = 0;
            }
          }
          metadata = decoder.end().metadata;
        }
        resourceVersion = metadata.resourceVersion;
        continueToken =
          paged && metadata.continue !== undefined && metadata.continue !== ''
            ? metadata.continue
            : undefined;
      } catch (error) {
        if (this.#aborted()) return { kind: 'aborted' };
        return { kind: 'failed', error: request.idle ?? error, continued };
      } finally {
        request.done();
      }
      if (continueToken !== undefined) {
        continued = true;
        continue;
      }
      if (resourceVersion === undefined || resourceVersion === '') {
        return {
          kind: 'failed',
          error: new TransportError(`list of ${this.#o.path} returned no resourceVersion`),
        };
      }
      for (const event of this.#tombstones()) yield event;
      this.#resourceVersion = resourceVersion;
      this.#synced = true;
      this.#listOpen = false;
      this.#policy.succeeded();
      this.#lastEventAt = this.#clock.now();
      yield { type: 'synced', resourceVersion, relist };
      return { kind: 'listed', resourceVersion };
    }
  }

  #timeoutSeconds(): number {
    const { min, max } = this.#o.timeoutSeconds ?? { min: 300, max: 600 };
    return Math.floor(min + this.#random() * Math.max(0, max - min));
  }

  /**
   * One watch stream. With `initial`, it is a streaming initial list (sendInitialEvents): events up
   * to the initial-events-end bookmark are reconciled like list items, then it goes on as a watch.
   */
  async *#stream(extra: Query, initial: boolean): AsyncGenerator<WatcherEvent<T>, Outcome, undefined> {
    const relist = this.#synced;
    if (initial) {
      yield* this.#listing(relist);
      this.#known.beginList();
    }
    /** Before the initial-events-end bookmark of a streaming initial list. */
    let listing = initial;
    const opened = this.#clock.now();
    const request = this.#request();
    const query: Query = {
      watch: true,
      allowWatchBookmarks: true,
      timeoutSeconds: this.#timeoutSeconds(),
      ...this.#selectors(),
      ...extra,
    };
    const lived = (): number => this.#clock.now() - opened;
    let delivered = false;
    const ended = (): Outcome => ({
      kind: 'ended',
      lived: lived(),
      delivered,
      listed: initial && !listing,
    });
    // Before its initial-events-end bookmark, a streaming initial list has a deadline of its own.
    const deadline = initial
      ? (): number | undefined => (listing ? this.#initialEventsMs() : undefined)
      : undefined;
    try {
      const { body, cbor } = await this.#open(query, request, deadline);
      this.#streams++;
      this.#policy.connected();
      if (!initial) this.#phase = 'watching';
      const decode: DecodeWatchOptions = {
        dropManagedFields: this.#o.dropManagedFields === true,
        objectJson: this.#o.objectJson,
        // Peeking before parsing pays off where objects are skipped: namespace and shard filtering,
        // and the streaming initial list (unchanged objects). A live watch rarely repeats a
        // resourceVersion, so it parses what it accepts straight away and #apply drops a repeat.
        // With nothing known yet, nothing can be unchanged: the first list parses straight away too.
        ...(initial && (this.#accept !== undefined || this.#known.size > 0)
          ? { filter: (peek: WatchEventPeek) => this.#listingFilter(peek) }
          : this.#liveFilter()),
      };
      // Lines are decoded here, each just before its event is yielded: no generator in between.
      const splitter = cbor ? undefined : new LineSplitter();
      const items = cbor ? new CborSequenceSplitter() : undefined;
      const out: WatcherEvent<T>[] = [];
      for await (const chunk of body) {
        for (const line of splitter?.push(chunk) ?? (items as CborSequenceSplitter).push(chunk)) {
          const event =
            splitter === undefined ? decodeCborWatchItem<T>(line, decode) : decodeWatchLine<T>(line, decode);
          if (event === undefined) continue;
          this.#lastEventAt = this.#clock.now();
          if (event.type === 'ERROR')
            return { kind: 'failed', error: event.error, listed: initial && !listing };
          if (!delivered) {
            // A stream that delivers is healthy, however short it turns out to be.
            delivered = true;
            this.#policy.succeeded();
          }
          const rv = event.object.metadata?.resourceVersion;
          if (rv !== undefined && rv !== '') this.#resourceVersion = rv;
          if (event.type === 'BOOKMARK') {
            if (!listing) {
              if (rv !== undefined) yield { type: 'bookmark', resourceVersion: rv };
            } else if (event.object.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true') {
              for (const gone of this.#tombstones()) yield gone;
              listing = false;
              // The live watch that follows parses straight away, as a plain watch does.
              Object.assign(decode, this.#liveFilter());
              this.#synced = true;
              this.#listOpen = false;
              this.#phase = 'watching';
              yield { type: 'synced', resourceVersion: rv ?? '', relist };
            } else {
              // A server that serves the streaming initial list sends no other bookmark before this one.
              return { kind: 'notServed', reason: 'a bookmark came before the initial-events-end bookmark' };
            }
          } else if (listing && event.type === 'ADDED') {
            this.#reconcile(event.object, line, true, relist, out);
            for (const change of out) yield change;
            out.length = 0;
          } else {
            const change = this.#apply(event.type, event.object, line);
            if (change !== undefined) yield change;
          }
        }
      }
      if (splitter === undefined) checkCborStreamEnd(items as CborSequenceSplitter);
      else checkStreamEnd(splitter);
      if (lived() >= (this.#o.stableMs ?? 30_000)) this.#policy.succeeded();
      return ended();
    } catch (error) {
      if (this.#aborted()) return { kind: 'aborted' };
      if (request.idle instanceof InitialEventsTimeout)
        return { kind: 'notServed', reason: request.idle.message };
      return { kind: 'failed', error: request.idle ?? error, listed: initial && !listing };
    } finally {
      request.done();
    }
  }

  /**
   * Announce a (re)list, once per cycle: a list retried after a failure, or a streaming list that
   * falls back to a plain one, continues the cycle its `listing` began (until `synced`).
   */
  *#listing(relist: boolean): Generator<WatcherEvent<T>, void, undefined> {
    if (this.#listOpen) return;
    this.#listOpen = true;
    this.#lists++;
    yield { type: 'listing', relist };
  }

  #initialEventsMs(): number {
    return this.#o.initialEventsTimeoutMs ?? 15_000;
  }

  /** A request of its own, aborted with the watcher, and told apart when the deadline killed it. */
  #request(): PendingRequest {
    const controller = new AbortController();
    const forward = (): void => controller.abort(this.#signal.reason);
    this.#signal.addEventListener('abort', forward, { once: true });
    const request: PendingRequest = {
      signal: controller.signal,
      idle: undefined,
      expire: (err: TransportError): void => {
        request.idle = err;
        controller.abort(err);
      },
      done: (): void => {
        this.#signal.removeEventListener('abort', forward);
        controller.abort(new Error('request finished'));
      },
    };
    return request;
  }

  /**
   * Send a GET and return its body, guarded by the inactivity deadline both while waiting for the
   * response headers and between chunks: a half-open connection is detected in lists and watches.
   * `shorter` may name a tighter deadline for now (a streaming initial list before its end
   * bookmark); when that one fires, the request fails with an {@link InitialEventsTimeout}.
   */
  async #open(
    query: Query,
    request: PendingRequest,
    shorter?: () => number | undefined,
  ): Promise<{ body: AsyncIterable<Uint8Array>; cbor: boolean }> {
    const ms = this.#o.inactivityTimeoutMs ?? 75_000;
    const deadline = (): number => Math.min(ms, shorter?.() ?? ms);
    const onIdle = (): void => {
      const limit = deadline();
      request.expire(
        limit < ms
          ? new InitialEventsTimeout(`no initial-events-end bookmark after ${limit / 1000} s of silence`)
          : new TransportError(`no data for ${ms / 1000} s from ${this.#o.path}`),
      );
    };
    const timer = this.#clock.setTimeout(onIdle, deadline());
    try {
      const accept = ACCEPT[this.#o.encoding ?? 'json'];
      const response = await this.#o.transport.stream({
        path: this.#o.path,
        query,
        signal: request.signal,
        ...(accept === undefined ? {} : { headers: { accept } }),
      });
      return {
        body: guardInactivity(response.body, deadline, this.#clock, onIdle),
        cbor: accept !== undefined && isCbor(response.headers),
      };
    } finally {
      this.#clock.clearTimeout(timer);
    }
  }

  /** A streaming initial list's filter: out of scope, or unchanged since it was last listed. */
  #listingFilter(peek: WatchEventPeek): boolean {
    if (peek.type === 'BOOKMARK') return true;
    if (
      (this.#accept !== undefined && !this.#accept(peek)) ||
      (peek.type !== 'DELETED' && this.#known.unchanged(peek, true))
    ) {
      if (peek.resourceVersion !== undefined) this.#resourceVersion = peek.resourceVersion;
      return false;
    }
    return true;
  }

  /**
   * A live watch's filter: the scope alone, reading only what it needs from the peek (a shard's
   * foreign event costs a few hundred bytes scanned and one hash); none without a scope.
   */
  #liveFilter(): Pick<DecodeWatchOptions, 'filter' | 'filterReads'> {
    const accept = this.#accept;
    if (accept === undefined) return { filter: undefined, filterReads: undefined };
    return {
      filter: (peek) => {
        if (peek.type === 'BOOKMARK' || accept(peek)) return true;
        if (peek.resourceVersion !== undefined) this.#resourceVersion = peek.resourceVersion;
        return false;
      },
      filterReads: this.#acceptReads,
    };
  }

  /** Apply a live watch event (parsed from `text`) to what is known; nothing for a change already seen. */
  #apply(
    type: 'ADDED' | 'MODIFIED' | 'DELETED',
    object: T,
    source: ObjectSource,
  ): WatcherEvent<T> | undefined {
    const key = metadataKey(object.metadata);
    const uid = object.metadata?.uid;
    if (type === 'DELETED') {
      // Only what was delivered can be deleted: a deletion already inferred by a relist is not
      // repeated. By uid: the deletion of one incarnation of a name never removes another.
      const known = this.#known.deleteIncarnation(key, uid);
      return known === undefined ? undefined : { type: 'deleted', object, tombstone: false };
    }
    const known = this.#known.incarnation(key, uid);
    if (known === undefined) {
      // A new incarnation while another of its name is known: that one was told by a resume from a
      // part confirmed further (sharded), and is kept until its own deletion comes.
      if (this.#known.get(key) !== undefined) this.#known.demote(key);
      this.#known.set(key, object, source, true);
      return { type: 'added', object };
    }
    if (known.resourceVersion === object.metadata?.resourceVersion) return undefined;
    return this.#modified(object, known, source, true);
  }
}

/** The server went quiet during a streaming initial list before its end bookmark. */
class InitialEventsTimeout extends TransportError {}

/** Network trouble, a broken stream, 429 or 5xx: expected now and then, not yet "failing". */
function isTransient(error: unknown): boolean {
  return error instanceof TransportError || errorKind(error) === 'decode' || isRetryable(error);
}
