/**
 * The daemon's sinks at work: one delivery queue per configured sink (`delivery/sink-delivery.ts`,
 * built with the sink's `delivery:` settings and the daemon's logging and metrics), the recovery
 * of a sink that overflowed, and the drain at shutdown.
 *
 * Recovery: a sink whose backlog passed `delivery.maxBacklog` drops what is queued and is marked
 * overflowed; as soon as its deliveries in flight have finished it is resynced from its checkpoint
 * by the watchers given to {@link SinkDeliveries.recover} (`overflow-recovery.ts`).
 */
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import type { RavenConfig } from '../config/raven-config-schema.js';
import { SinkDelivery } from './sink-delivery.js';
import type { RavenMetrics } from '../metrics/metrics.js';
import { buildSink, type BuildSinkOptions } from './build-sink.js';
import type { Sink } from '../sinks/sink.js';
import { OverflowRecovery, type Resyncable } from './overflow-recovery.js';

export interface SinkDeliveriesOptions {
  clock: Clock;
  logger: Logger;
  metrics: RavenMetrics;
  /** The watchers routed to a sink, in order (`Router.watchersOf`): who resyncs it after an overflow. */
  watchersOf: (sink: string) => readonly string[];
  /** Where a stdout sink writes (the process's stdout unless given). */
  stdout?: BuildSinkOptions['stdout'];
  /** Builds each sink from its config: `buildSink` unless given (tests give their own). */
  build?: (config: RavenConfig['sinks'][number]) => Sink;
}

export class SinkDeliveries {
  /** Each sink's delivery queue, by sink name, in config order. */
  readonly byName = new Map<string, SinkDelivery>();
  readonly #log: Logger;
  readonly #recovery: OverflowRecovery;

  constructor(sinks: RavenConfig['sinks'], options: SinkDeliveriesOptions) {
    this.#log = options.logger;
    this.#recovery = new OverflowRecovery(this.byName, {
      clock: options.clock,
      logger: options.logger,
      watchersOf: options.watchersOf,
    });
    const build =
      options.build ??
      ((config) =>
        buildSink(config, {
          clock: options.clock,
          ...(options.stdout === undefined ? {} : { stdout: options.stdout }),
        }));
    for (const config of sinks) {
      const sink = build(config);
      const d = config.delivery;
      this.byName.set(
        sink.name,
        new SinkDelivery(sink, {
          concurrency: d.concurrency,
          maxAttempts: d.maxAttempts,
          initialBackoffMs: d.initialBackoffMs,
          maxBackoffMs: d.maxBackoffMs,
          maxRetryAfterMs: d.maxRetryAfterMs,
          maxBacklog: d.maxBacklog,
          ...(d.deadLetterPath === undefined ? {} : { deadLetterPath: d.deadLetterPath }),
          clock: options.clock,
          logger: options.logger,
          metrics: options.metrics.forSink(sink.name),
          // The checkpoint records what each event's routing says when it settles (watcher-sinks.ts);
          // a dead-lettered change counts as handled: it is in the dead-letter file.
          onDeadLetter: (event, error) => {
            this.#log.error(
              {
                sink: sink.name,
                event: event.id,
                err: error instanceof Error ? error.message : String(error),
              },
              'event dead-lettered',
            );
          },
          onOverflow: () => this.#recovery.overflowed(sink.name),
          onOverflowDrained: () => this.#recovery.drained(sink.name),
        }),
      );
    }
  }

  /** `watcher`'s side of delivery (`watcher-sinks.ts`): it resyncs its sinks after they overflow. */
  recover(watcher: string, sinks: Resyncable): void {
    this.#recovery.add(watcher, sinks);
  }

  /** Events held for every sink: queued, waiting to retry or in flight. */
  get backlog(): number {
    let n = 0;
    for (const delivery of this.byName.values()) n += delivery.backlog;
    return n;
  }

  /**
   * Stop resyncing and drain every sink, each within `deadlineMs`; what a sink did not deliver in
   * time is said once (it is found again at the next start: the checkpoint has not recorded it).
   * Resolves with the number of sinks drained.
   */
  async close(deadlineMs: number): Promise<number> {
    this.#recovery.close();
    const results = await Promise.all(
      [...this.byName].map(async ([name, delivery]) => {
        const result = await delivery.close(deadlineMs);
        if (result.left > 0)
          this.#log.warn(
            { sink: name, left: result.left },
            'not delivered before the drain deadline; they will be found again at the next start',
          );
        return result;
      }),
    );
    return results.length;
  }
}
