/**
 * The Raven daemon: config → client → watchers → router → sinks (through the delivery layer) and
 * custom handlers; checkpoints; health and metrics; leader election; graceful shutdown.
 *
 * Guarantees:
 * - at-least-once delivery per sink, in order per object; every delivery (and every change a sink
 *   is routed but filtered from) is recorded in the sink's checkpoint, with, per watcher, the
 *   resourceVersion up to which every sink confirmed every change (`watcher-sinks.ts`);
 * - after a restart each watch resumes from that resourceVersion, so the apiserver replays every
 *   change made since (a change a sink already has is skipped); only when it has expired does the
 *   daemon list and deliver what differs from each sink's checkpoint, and it reports that gap;
 * - a sink with no checkpoint gets a baseline (`initial: none`) or an `added` per object
 *   (`initial: added`);
 * - a sink that falls past its backlog limit is brought up to date from its checkpoint as soon as
 *   its deliveries in flight have finished (intermediate states of an object are then coalesced:
 *   a gap, reported; `delivery/overflow-recovery.ts`);
 * - a failing sink or handler never blocks the others or the watchers;
 * - on shutdown, watching stops, deliveries drain up to `shutdown.drainTimeoutSeconds`, and the
 *   checkpoints are written.
 */
import { hostname } from 'node:os';
import { loadConfig } from '../client/load-config.js';
import { KubeClient } from '../client/kube-client.js';
import { Discovery } from '../client/discovery.js';
import { UnknownResourceError } from '../client/unknown-resource-error.js';
import type { ResolvedResource } from '../client/api-resource.js';
import { stoppedStatus, type WatcherStatus } from '../watch/watcher-events.js';
import { LeaderElector } from '../controller/leader-election.js';
import { splitHashSpace, type Shard, type ShardRange } from '../watch/shard/shard.js';
import { ShardedCheckpoints } from './checkpoint/sharded-checkpoints.js';
import { systemClock, sleep, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import type { CheckpointStore } from './checkpoint/checkpoint-store.js';
import { openCheckpointStore } from './checkpoint/open-checkpoint-store.js';
import { leaseTimingsMs, type RavenConfig } from './config/raven-config-schema.js';
import { resolveWatchers } from './resolve-watchers.js';
import { runShardedReplica } from './sharded-replica.js';
import { SinkDeliveries } from './delivery/sink-deliveries.js';
import { HandlerRunner, handlerCache, loadHandler, type HandlerContext } from './handlers/custom-handler.js';
import { HealthServer, type MountedRoutes, type Readiness } from './health-server.js';
import { RavenMetrics } from './metrics/metrics.js';
import { Router } from './routing/router.js';
import { WatcherPipeline } from './pipeline/watcher-pipeline.js';
import type { EventsWatcherConfig, WatcherConfig } from './config/watcher-schema.js';
import { EventFeed } from './events/event-feed.js';
import { InvolvedObjects } from './events/involved-objects.js';
import { WatcherSinks, type WatcherSinksContext } from './delivery/watcher-sinks.js';
import { runWatcher } from './pipeline/run-watcher.js';
import { handlersTap, logTap, metricsTap, uiTap, type UiSource } from './watcher-taps.js';
import { OpenStackClient } from '../openstack/openstack-client.js';
import { Translator } from '../translator/translator.js';
import { cidrList } from '../translator/cidr.js';
import { defaultSettings } from '../translator/settings.js';
import type { TranslatorConfig } from './config/translator-schema.js';

export interface DaemonOptions {
  config: RavenConfig;
  logger?: Logger;
  clock?: Clock;
  /** Environment for the kubeconfig lookup. */
  env?: Record<string, string | undefined>;
  /** Where stdout sinks write (tests). */
  stdout?: NodeJS.WritableStream & { isTTY?: boolean };
  /** The config's file name, for errors found at run time (an unknown resource). */
  configFile?: string;
  /** Random numbers in [0, 1) for retry jitter; injected for tests. */
  random?: () => number;
  /** The web view, served under `server.ui.path` when `server.ui.enabled` (built by the CLI). */
  ui?: DaemonUi;
  /**
   * The cluster's client: made from the kubeconfig (`config.kubeconfig`, `config.context`, `env`)
   * unless given. A given client stays the caller's: the daemon does not destroy it.
   */
  client?: KubeClient;
}

/** One term of work: until `signal` aborts; `epoch` the leader's term, `parts` a sharded replica's. */
type Work = (signal: AbortSignal, epoch?: number, parts?: readonly number[]) => Promise<void>;

/** One watcher of a term of work, with what its sinks and taps share with the others. */
interface Watching {
  config: WatcherConfig;
  resolved: ResolvedResource;
  feed: EventFeed | undefined;
  sinkSide: WatcherSinksContext;
  sinks: SinkDeliveries;
  router: Router;
  handlers: ReadonlyMap<string, HandlerRunner>;
}

/** What the daemon needs of the web view: its routes, and a way in for each watcher's changes. */
export interface DaemonUi {
  routes: MountedRoutes;
  source(name: string, resource: ResolvedResource, status: () => WatcherStatus): UiSource;
}

export class Daemon {
  readonly #config: RavenConfig;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #options: DaemonOptions;
  readonly metrics: RavenMetrics;
  readonly #pipelines = new Map<string, WatcherPipeline>();
  readonly #translators = new Map<string, Translator>();
  readonly #uiSources = new Map<string, ReturnType<DaemonUi['source']>>();
  #health: HealthServer | undefined;
  #leading = false;
  #standby = false;

  constructor(options: DaemonOptions) {
    this.#options = options;
    this.#config = options.config;
    this.#log = options.logger ?? silentLogger;
    this.#clock = options.clock ?? systemClock;
    this.metrics = new RavenMetrics(() => this.#statuses());
  }

  /** The health server's base URL, once started. */
  get healthUrl(): string | undefined {
    return this.#health?.url;
  }

  readiness(): Readiness {
    const details: Record<string, string> = {};
    if (this.#standby && !this.#leading)
      return {
        ready: true,
        details: this.#config.sharding.enabled
          ? { sharding: 'no part of the hash space is this replica’s (yet)' }
          : { leaderElection: 'standby: another replica leads' },
      };
    if (this.#pipelines.size === 0 && this.#config.watchers.length > 0) details.watchers = 'starting';
    for (const t of this.#config.translators) {
      const translator = this.#translators.get(t.name);
      if (translator === undefined) details[`translator ${t.name}`] = 'starting';
      else if (!translator.ready) details[`translator ${t.name}`] = translator.problem ?? 'not ready';
    }
    for (const [name, pipeline] of this.#pipelines) {
      const status = pipeline.status();
      if (!pipeline.synced) details[`watcher ${name}`] = 'not synced yet';
      else if (status?.phase === 'failing')
        details[`watcher ${name}`] = `failing: ${status.lastError?.message ?? 'unknown error'}`;
    }
    return { ready: Object.keys(details).length === 0, details };
  }

  /** Run until `signal` aborts; resolves after a graceful shutdown. */
  async run(signal: AbortSignal): Promise<void> {
    const config = this.#config;
    const client = this.#options.client ?? (await this.#connect());
    try {
      await this.#serveHealth();
      const discovery = new Discovery(client, { logger: this.#log });
      const resources = await resolveWatchers(config.watchers, discovery, {
        clock: this.#clock,
        logger: this.#log,
        signal,
        ...(this.#options.random === undefined ? {} : { random: this.#options.random }),
        ...(this.#options.configFile === undefined ? {} : { configFile: this.#options.configFile }),
      });
      if (resources === undefined) return;
      const work: Work = (stop, epoch, parts) => this.#work(client, discovery, resources, stop, epoch, parts);
      if (config.leaderElection.enabled) await this.#leaderElected(client, work, signal);
      else if (config.sharding.enabled) await this.#sharded(client, work, signal);
      else await this.#single(work, signal);
    } finally {
      await this.#health?.close();
      if (this.#options.client === undefined) await client.destroy();
    }
  }

  async #connect(): Promise<KubeClient> {
    const config = this.#config;
    return new KubeClient(
      await loadConfig({
        ...(config.kubeconfig === undefined ? {} : { kubeconfig: config.kubeconfig }),
        ...(config.context === undefined ? {} : { context: config.context }),
        ...(this.#options.env === undefined ? {} : { env: this.#options.env }),
        logger: this.#log,
      }),
      { logger: this.#log },
    );
  }

  /** `/healthz`, `/readyz`, `/metrics` and the web view, when `server.enabled`. */
  async #serveHealth(): Promise<void> {
    const config = this.#config;
    if (!config.server.enabled) return;
    const ui = config.server.ui.enabled ? this.#options.ui : undefined;
    this.#health = await HealthServer.start({
      address: config.server.address,
      port: config.server.port,
      registry: this.metrics.registry,
      readiness: () => this.readiness(),
      ...(ui === undefined ? {} : { ui: { path: config.server.ui.path, routes: ui.routes } }),
    });
    this.#log.info({ url: this.#health.url }, 'serving /healthz, /readyz and /metrics');
    if (ui !== undefined)
      this.#log.info(
        { url: `${this.#health.url}${config.server.ui.path}/`, token: config.server.ui.token !== undefined },
        'serving the web view',
      );
  }

  /** The only replica: works until `signal` aborts. */
  async #single(work: Work, signal: AbortSignal): Promise<void> {
    this.metrics.leader.set(1);
    this.#leading = true;
    await work(signal);
  }

  /** One of several replicas: works while it holds the Lease, a term at a time. */
  async #leaderElected(client: KubeClient, work: Work, signal: AbortSignal): Promise<void> {
    const le = this.#config.leaderElection;
    this.#standby = true;
    this.metrics.leader.set(0);
    await new LeaderElector({
      client,
      namespace: le.namespace,
      name: le.name,
      identity: le.identity,
      ...leaseTimingsMs(le),
      clock: this.#clock,
      logger: this.#log,
      onStartedLeading: async (leading, term) => {
        this.#leading = true;
        this.metrics.leader.set(1);
        try {
          await work(leading, term.epoch);
        } finally {
          this.#leading = false;
          this.metrics.leader.set(0);
        }
      },
      onNewLeader: (identity) => this.#log.info({ leader: identity }, 'leader'),
    }).run(signal);
  }

  /** One of a group of replicas that share the hash space: works on the parts it holds. */
  async #sharded(client: KubeClient, work: Work, signal: AbortSignal): Promise<void> {
    this.#standby = true;
    this.metrics.leader.set(0);
    await runShardedReplica(
      {
        client,
        config: this.#config.sharding,
        clock: this.#clock,
        logger: this.#log,
        ...(this.#options.random === undefined ? {} : { random: this.#options.random }),
        work: (parts, stop) => work(stop, undefined, parts),
        onMembers: (members) => this.metrics.shardMembers.set(members.length),
        onParts: (parts) => {
          this.#leading = parts.length > 0;
          this.metrics.leader.set(parts.length > 0 ? 1 : 0);
          this.metrics.shardParts.set(parts.length);
        },
      },
      signal,
    );
  }

  /**
   * The shared cache of involved objects for the events watchers (undefined when none enriches):
   * each configured kind resolved (a kind the server does not serve is skipped with a warning),
   * its informers started; resolves once they have all listed.
   */
  async #involvedObjects(
    client: KubeClient,
    discovery: Discovery,
    signal: AbortSignal,
  ): Promise<InvolvedObjects | undefined> {
    const watchers = this.#config.watchers.filter(
      (w): w is EventsWatcherConfig => w.type === 'events' && w.enrich.kinds.length > 0,
    );
    if (watchers.length === 0) return undefined;
    const involved = new InvolvedObjects({ transport: client, clock: this.#clock, logger: this.#log });
    for (const watcher of watchers) {
      for (const kind of watcher.enrich.kinds) {
        try {
          involved.add(await discovery.resolve(kind, signal), watcher.namespaces);
        } catch (error) {
          if (!(error instanceof UnknownResourceError)) throw error;
          this.#log.warn(
            { watcher: watcher.name, kind },
            'the server does not serve this kind; Events about it are not enriched',
          );
        }
      }
    }
    this.#log.info({ kinds: involved.kinds }, 'caching involved objects to enrich Events');
    try {
      await involved.start(signal);
    } catch (error) {
      if (signal.aborted) return undefined;
      throw error;
    }
    return involved;
  }

  #statuses(): ReadonlyMap<string, NonNullable<ReturnType<WatcherPipeline['status']>>> {
    const out = new Map<string, NonNullable<ReturnType<WatcherPipeline['status']>>>();
    for (const [name, pipeline] of this.#pipelines) {
      const status = pipeline.status();
      if (status !== undefined) out.set(name, status);
    }
    return out;
  }

  /**
   * Everything that runs only while this replica is the active one (sharded: on `parts`):
   * checkpoint → deliveries → handlers → one `runWatcher` per watcher (and the translators) →
   * drain.
   */
  async #work(
    client: KubeClient,
    discovery: Discovery,
    resources: Map<string, ResolvedResource>,
    signal: AbortSignal,
    epoch?: number,
    parts?: readonly number[],
  ): Promise<void> {
    const config = this.#config;
    const router = new Router(config);
    const stopWork = new AbortController();
    // Linked before the first await: a stop that comes while the checkpoint opens is not missed
    // (a listener added to a signal that has already aborted never runs).
    const onAbort = (): void => stopWork.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    const { checkpoints, sharded, shard } = await this.#openCheckpoints(stopWork, epoch, parts).catch(
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        throw err;
      },
    );
    const sinks = new SinkDeliveries(config.sinks, {
      clock: this.#clock,
      logger: this.#log,
      metrics: this.metrics,
      watchersOf: (sink) => router.watchersOf(sink),
      ...(this.#options.stdout === undefined ? {} : { stdout: this.#options.stdout }),
    });
    const handlers = new Map<string, HandlerRunner>();
    try {
      const sinkSide = this.#sinkSide(router, sinks, checkpoints, sharded);
      await this.#startHandlers(handlers, client, discovery, stopWork.signal);
      const involved = config.watchers.some((w) => w.type === 'events')
        ? this.#involvedObjects(client, discovery, stopWork.signal)
        : Promise.resolve(undefined);
      const runs = config.watchers.map(async (watcherConfig) => {
        const resolved = resources.get(watcherConfig.name);
        if (resolved === undefined) return;
        const feed =
          watcherConfig.type === 'events'
            ? new EventFeed({
                involved: await involved,
                dedupWindowMs: watcherConfig.dedupWindowSeconds * 1000,
              })
            : undefined;
        if (stopWork.signal.aborted) return;
        const watching = { config: watcherConfig, resolved, feed, sinkSide, sinks, router, handlers };
        await this.#watch(watching, client, stopWork.signal, shard);
      });
      const translations = config.translators.map((t) => this.#runTranslator(t, client, stopWork.signal));
      await Promise.all([...runs, ...translations]);
    } finally {
      signal.removeEventListener('abort', onAbort);
      stopWork.abort(new Error('stopping'));
      await this.#drain(sinks, handlers, checkpoints);
      this.#pipelines.clear();
      this.#translators.clear();
    }
  }

  /** What every watcher's sinks share in one term of work (sharded: the part arithmetic). */
  #sinkSide(
    router: Router,
    sinks: SinkDeliveries,
    checkpoints: CheckpointStore,
    sharded: ShardedCheckpoints | undefined,
  ): WatcherSinksContext {
    const config = this.#config;
    return {
      router,
      deliveries: sinks.byName,
      checkpoints,
      metrics: this.metrics,
      logger: this.#log,
      clock: this.#clock,
      diffIgnore: config.diff.ignore,
      gapNotices: new Set(config.sinks.filter((s) => s.gapNotices).map((s) => s.name)),
      ...(sharded === undefined
        ? {}
        : {
            sharding: { field: config.sharding.field, buckets: config.sharding.buckets },
            replayFloor: (event, sink) => sharded.replayFloor(event, sink),
            partOf: (uid, namespace) => sharded.partOf(uid, namespace),
          }),
    };
  }

  /**
   * One watcher until `signal` aborts: its pipeline, its sinks (recovered on overflow by
   * `sinks`), its taps (log, metrics, web view, handlers), and the one loop that joins them.
   */
  async #watch(
    w: Watching,
    client: KubeClient,
    signal: AbortSignal,
    shard: Shard | undefined,
  ): Promise<void> {
    const name = w.config.name;
    const pipeline = new WatcherPipeline(w.config, w.resolved, w.feed);
    const watcherSinks = new WatcherSinks(w.sinkSide, pipeline);
    this.#pipelines.set(name, pipeline);
    w.sinks.recover(name, watcherSinks);
    const log = this.#log.child({ watcher: name });
    const ui = this.#uiSource(name, w.resolved);
    const taps = [
      logTap(log),
      metricsTap(this.metrics, name),
      ...(ui === undefined ? [] : [uiTap(ui)]),
      handlersTap(w.router, w.handlers),
    ];
    await runWatcher(pipeline, watcherSinks, taps, {
      transport: client,
      clock: this.#clock,
      logger: log,
      diffIgnore: this.#config.diff.ignore,
      signal,
      ...(this.#options.random === undefined ? {} : { random: this.#options.random }),
      ...(shard === undefined ? {} : { shard }),
      server: client.server,
    });
  }

  /**
   * The checkpoint for one term of work. A shared checkpoint another replica took over stops the
   * work at once (`stopWork`). Sharded: one fence per part owned, the checkpoint kept per part,
   * and the part of the hash space the watches cover.
   */
  async #openCheckpoints(
    stopWork: AbortController,
    epoch: number | undefined,
    parts: readonly number[] | undefined,
  ): Promise<{ checkpoints: CheckpointStore; sharded?: ShardedCheckpoints; shard?: Shard }> {
    const config = this.#config;
    const sh = config.sharding;
    const opened = await openCheckpointStore(config.checkpoint, {
      clock: this.#clock,
      logger: this.#log,
      holder: parts === undefined ? config.leaderElection.identity : sh.identity,
      ...(epoch === undefined ? {} : { epoch }),
      ...(parts === undefined ? {} : { fences: parts.map((part) => `${sh.group}/${part}`) }),
      onFenced: (error) => {
        this.metrics.checkpointFenced.inc();
        stopWork.abort(error);
      },
    });
    if (parts === undefined) return { checkpoints: opened };
    const sharded = new ShardedCheckpoints(opened, { field: sh.field, buckets: sh.buckets, owned: parts });
    const range = parts.map((part) => splitHashSpace(sh.buckets)[part] as ShardRange);
    return { checkpoints: sharded, sharded, shard: { field: sh.field, range } };
  }

  /** Load and start each custom handler, in config order, into `handlers`. */
  async #startHandlers(
    handlers: Map<string, HandlerRunner>,
    client: KubeClient,
    discovery: Discovery,
    signal: AbortSignal,
  ): Promise<void> {
    const watchers = this.#config.watchers.map((w) => w.name);
    for (const [index, h] of this.#config.handlers.entries()) {
      const context: HandlerContext = {
        name: h.name,
        options: h.options,
        client,
        discovery,
        logger: this.#log.child({ handler: h.name }),
        signal,
        cache: (watcher) => handlerCache(h.name, watcher, this.#pipelines, watchers),
      };
      const runner = new HandlerRunner(
        h.name,
        await loadHandler(h.module, h.options, `handlers[${index}].module`),
        context,
        (error, event) => {
          this.metrics.handlerErrors.inc({ handler: h.name });
          this.#log.error(
            { handler: h.name, event: event.id, err: error instanceof Error ? error.message : String(error) },
            'handler failed',
          );
        },
      );
      await runner.start();
      handlers.set(h.name, runner);
    }
  }

  /** The web view's way in for one watcher: made once, kept across leadership terms. */
  #uiSource(name: string, resource: ResolvedResource): ReturnType<DaemonUi['source']> | undefined {
    const ui = this.#config.server.ui.enabled && this.#config.server.enabled ? this.#options.ui : undefined;
    if (ui === undefined) return undefined;
    let source = this.#uiSources.get(name);
    if (source === undefined) {
      source = ui.source(name, resource, () => this.#pipelines.get(name)?.status() ?? stoppedStatus());
      this.#uiSources.set(name, source);
    }
    return source;
  }

  /** One built-in translator, with its own OpenStack client, until `signal` aborts. */
  async #runTranslator(config: TranslatorConfig, client: KubeClient, signal: AbortSignal): Promise<void> {
    const log = this.#log.child({ translator: config.name });
    const openstack = new OpenStackClient(config.openstack, {
      clock: this.#clock,
      logger: log,
      onCall: this.metrics.forOpenStack(config.name),
    });
    const translator = new Translator({
      name: config.name,
      kube: client,
      openstack,
      clock: this.#clock,
      logger: log,
      settings: {
        ...defaultSettings,
        clusterId: config.clusterId,
        serviceCidrs: cidrList(config.serviceCidr),
        podCidrs: cidrList(config.podCidr),
        podPrefixLength: config.podPrefixLength,
        podPrefixLengthIPv6: config.podPrefixLengthIPv6,
        portPool: config.portPool,
        externalNetworkId: config.externalNetworkId,
        existing: config.existing,
        loadBalancerProvider: config.loadBalancerProvider,
        loadBalancerTimeoutMs: config.loadBalancerTimeoutSeconds * 1000,
        gcIntervalMs: config.gcIntervalSeconds * 1000,
        resyncIntervalMs: config.resyncSeconds * 1000,
        workers: config.workers,
      },
    });
    this.#translators.set(config.name, translator);
    this.metrics.watchTranslator(
      config.name,
      () => translator.status.counts(),
      () => ({ free: translator.portPools.freeTotal(), ...translator.portPools.stats }),
      () => translator.driftRepaired,
    );
    try {
      await translator.run(signal);
    } finally {
      await openstack.close();
    }
  }

  async #drain(
    sinks: SinkDeliveries,
    handlers: Map<string, HandlerRunner>,
    checkpoints: CheckpointStore,
  ): Promise<void> {
    const deadlineMs = this.#config.shutdown.drainTimeoutSeconds * 1000;
    // Said before waiting, so a slow drain is visible while it happens, not only once it is over.
    this.#log.info(
      { events: sinks.backlog, drainTimeoutSeconds: this.#config.shutdown.drainTimeoutSeconds },
      'draining: delivering what is queued',
    );
    const drained = await sinks.close(deadlineMs);
    // The deadline's timer goes once the handlers stopped: left running it would keep the process
    // alive for the whole drain timeout after everything else had ended.
    const deadline = new AbortController();
    await Promise.race([
      Promise.all([...handlers.values()].map((h) => h.stop())),
      sleep(this.#clock, deadlineMs, deadline.signal).catch(() => undefined),
    ]);
    deadline.abort();
    try {
      await checkpoints.close();
    } catch (error) {
      this.#log.error(
        { err: error instanceof Error ? error.message : String(error) },
        'could not write the checkpoints',
      );
    }
    this.#log.info({ sinks: drained }, 'drained');
  }
}

/** The default leader-election identity: host name and process id. */
export function defaultIdentity(): string {
  return `${hostname()}-${process.pid}`;
}
