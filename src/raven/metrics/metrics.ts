/**
 * The daemon's Prometheus metrics, on a registry of its own (never the global one, so several
 * daemons can run in one process, as tests do). Names are `raven_*`; the process's own metrics
 * (CPU, memory, event-loop lag) are included with the same prefix.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CallObserver } from '../../openstack/call-api.js';
import type { DeliveryMetrics } from './delivery-metrics.js';
import type { WatcherStatus } from '../../watch/watcher-events.js';

/**
 * How often the event-loop lag histogram (`raven_nodejs_eventloop_lag_*`) samples, in ms.
 * prom-client's default, 10 ms, runs a timer a hundred times a second: in an idle daemon that
 * was 98 wake-ups a second and 9.5 of its 11.75 ms of CPU a second (measured 2026-11-28, one
 * daemon watching ConfigMaps, nothing changing), and a replica that handles a few dozen changes a
 * second woke for the timer more often than for its changes. At 100 ms the same daemon wakes
 * 12 times a second and uses 2.75 ms of CPU a second. A stall of the loop longer than 100 ms is
 * still measured in full (it holds back the next sample); shorter ones are caught in proportion.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

export class RavenMetrics {
  readonly registry = new Registry();
  readonly events = new Counter({
    name: 'raven_events_total',
    help: 'Changes seen, per watcher and type (before routes and predicates).',
    labelNames: ['watcher', 'type'] as const,
    registers: [this.registry],
  });
  readonly filtered = new Counter({
    name: 'raven_events_filtered_total',
    help: 'Changes not delivered to a sink because of event filters or predicates.',
    labelNames: ['watcher', 'sink'] as const,
    registers: [this.registry],
  });
  readonly deliveries = new Counter({
    name: 'raven_deliveries_total',
    help: 'Delivery attempts per sink and outcome (delivered, failed, retried, dead_lettered, duplicate).',
    labelNames: ['sink', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly backlog = new Gauge({
    name: 'raven_delivery_backlog',
    help: 'Events held for a sink: queued, waiting to retry or in flight.',
    labelNames: ['sink'] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'raven_delivery_latency_seconds',
    help: 'From a change being queued for a sink to the sink accepting it, retries included.',
    labelNames: ['sink'] as const,
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
    registers: [this.registry],
  });
  readonly overflows = new Counter({
    name: 'raven_delivery_overflows_total',
    help: 'Times a sink fell past its backlog limit and was switched to resync from its checkpoint.',
    labelNames: ['sink'] as const,
    registers: [this.registry],
  });
  readonly gaps = new Counter({
    name: 'raven_gaps_total',
    help: 'Times intermediate changes may not reach a sink (resume-expired, relist, no-resume-point, overflow); the end state still does.',
    labelNames: ['watcher', 'sink', 'reason'] as const,
    registers: [this.registry],
  });
  readonly relists = new Counter({
    name: 'raven_watcher_relists_total',
    help: 'Relists after the first list (410 Expired and the like).',
    labelNames: ['watcher'] as const,
    registers: [this.registry],
  });
  readonly watchErrors = new Counter({
    name: 'raven_watcher_errors_total',
    help: 'Watch errors the watcher recovered from, per kind (api:410, transport, decode, ...).',
    labelNames: ['watcher', 'kind'] as const,
    registers: [this.registry],
  });
  readonly handlerErrors = new Counter({
    name: 'raven_handler_errors_total',
    help: 'Custom handler calls that threw or rejected.',
    labelNames: ['handler'] as const,
    registers: [this.registry],
  });
  readonly openStackCalls = new Counter({
    name: 'raven_openstack_calls_total',
    help: 'HTTP calls a translator made to OpenStack (each retry counts), by service, method, resource (the path without ids) and outcome (ok, the HTTP status, or transport).',
    labelNames: ['translator', 'service', 'method', 'resource', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly openStackCallSeconds = new Histogram({
    name: 'raven_openstack_call_seconds',
    help: 'How long each HTTP call a translator made to OpenStack took, answer or failure, by service, method and resource.',
    labelNames: ['translator', 'service', 'method', 'resource'] as const,
    buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly checkpointFenced = new Counter({
    name: 'raven_checkpoint_fenced_total',
    help: 'Times a checkpoint write was refused because another replica holds the fence (this replica stopped its work).',
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'raven_leader',
    help: '1 while this replica leads (always 1 without leader election).',
    registers: [this.registry],
  });
  readonly shardMembers = new Gauge({
    name: 'raven_shard_members',
    help: 'Sharded replicas: the members of the group this replica counts, itself included once it is in.',
    registers: [this.registry],
  });
  readonly shardParts = new Gauge({
    name: 'raven_shard_parts',
    help: 'Sharded replicas: how many parts of the hash space (of sharding.buckets) this replica owns and watches.',
    registers: [this.registry],
  });

  constructor(watcherStatus: () => ReadonlyMap<string, WatcherStatus>) {
    collectDefaultMetrics({
      register: this.registry,
      prefix: 'raven_',
      eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
    });
    const statusGauge = (name: string, help: string, value: (s: WatcherStatus) => number): void => {
      new Gauge({
        name,
        help,
        labelNames: ['watcher'] as const,
        registers: [this.registry],
        collect() {
          this.reset();
          for (const [watcher, status] of watcherStatus()) this.set({ watcher }, value(status));
        },
      });
    };
    statusGauge('raven_watcher_synced', '1 once the watcher has listed everything.', (s) =>
      s.synced ? 1 : 0,
    );
    statusGauge(
      'raven_watcher_seconds_since_last_event',
      'Seconds since the last event or bookmark.',
      (s) => s.secondsSinceLastEvent,
    );
    // A counter (cumulative since the watcher started; it restarts from 0 with a new watcher,
    // which Prometheus' rate() reads as a counter reset).
    new Counter({
      name: 'raven_watcher_reconnects_total',
      help: 'Watch streams reopened since start.',
      labelNames: ['watcher'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [watcher, status] of watcherStatus()) this.inc({ watcher }, status.reconnects);
      },
    });
    statusGauge('raven_watcher_failing', '1 while the watcher is failing (see logs for the Status).', (s) =>
      s.phase === 'failing' ? 1 : 0,
    );
    statusGauge('raven_watcher_objects', 'Objects the watcher currently knows of.', (s) => s.objects);
    const translatorCounts = this.#translatorCounts;
    new Gauge({
      name: 'raven_translator_objects',
      help: 'Kubernetes objects a translator handles, by state: managed, pending (waiting for a dependency), failing (see logs for the OpenStack error).',
      labelNames: ['translator', 'state'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [translator, counts] of translatorCounts)
          for (const [state, n] of Object.entries(counts())) this.set({ translator, state }, n);
      },
    });
    const translatorPools = this.#translatorPools;
    new Gauge({
      name: 'raven_translator_pool_ports',
      help: 'Port pools of a translator: free (pre-created ports waiting now), taken (pods given a pool port since start), created (pool ports created since start).',
      labelNames: ['translator', 'state'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [translator, pools] of translatorPools)
          for (const [state, n] of Object.entries(pools())) this.set({ translator, state }, n);
      },
    });
    const translatorDrift = this.#translatorDrift;
    // A counter (cumulative since the translator started), read from the translator when scraped.
    new Counter({
      name: 'raven_translator_drift_repaired_total',
      help: 'Repairs of what was changed in OpenStack outside Raven (found by the resync pass), by kind: security-group-rule, security-group, port, network, subnet, router-interface, load-balancer, listener, pool, member, floating-ip.',
      labelNames: ['translator', 'kind'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [translator, drift] of translatorDrift)
          for (const [kind, n] of Object.entries(drift()))
            if (n !== undefined) this.inc({ translator, kind }, n);
      },
    });
  }

  readonly #translatorCounts = new Map<string, () => Record<string, number>>();
  readonly #translatorPools = new Map<string, () => { free: number; taken: number; created: number }>();
  readonly #translatorDrift = new Map<string, () => Readonly<Record<string, number | undefined>>>();

  /**
   * Report a translator's managed / pending / failing objects as raven_translator_objects, its
   * port pools as raven_translator_pool_ports, and the drift it repaired (since start, by kind) as
   * raven_translator_drift_repaired_total.
   */
  watchTranslator(
    name: string,
    counts: () => Record<string, number>,
    pools?: () => { free: number; taken: number; created: number },
    drift?: () => Readonly<Record<string, number | undefined>>,
  ): void {
    this.#translatorCounts.set(name, counts);
    if (pools !== undefined) this.#translatorPools.set(name, pools);
    if (drift !== undefined) this.#translatorDrift.set(name, drift);
  }

  /** The OpenStack client's call observer for one translator. */
  forOpenStack(translator: string): CallObserver {
    return ({ seconds, ...call }) => {
      this.openStackCalls.inc({ translator, ...call });
      this.openStackCallSeconds.observe(
        { translator, service: call.service, method: call.method, resource: call.resource },
        seconds,
      );
    };
  }

  /** The delivery layer's hooks for one sink. */
  forSink(sink: string): DeliveryMetrics {
    return {
      delivered: () => this.deliveries.inc({ sink, outcome: 'delivered' }),
      duplicate: () => this.deliveries.inc({ sink, outcome: 'duplicate' }),
      failed: () => this.deliveries.inc({ sink, outcome: 'failed' }),
      retried: () => this.deliveries.inc({ sink, outcome: 'retried' }),
      deadLettered: () => this.deliveries.inc({ sink, outcome: 'dead_lettered' }),
      backlog: (size) => this.backlog.set({ sink }, size),
      latency: (seconds) => this.latency.observe({ sink }, seconds),
      overflowed: () => this.overflows.inc({ sink }),
    };
  }
}
