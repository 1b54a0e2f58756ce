/**
 * The daemon's sinks at work: one delivery queue per configured sink (`delivery/sink-delivery.ts`,
 * built with the sink's `delivery:` settings and the daemon's logging and metrics), the catch-up
 * of a sink that overflowed, and the drain at shutdown.
 *
 * Catch-up: a sink whose backlog passed `delivery.maxBacklog` drops what is queued and is marked
 * overflowed. Every {@link RESYNC_CHECK_MS}, each overflowed sink is given, in one synchronous
 * step, what its watchers compute from the checkpoint (`resyncOf`: the latest state of every
 * object the sink has not confirmed, with gap records where changes may be missing).
 */
import type { Clock, TimerHandle } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import type { RavenConfig } from '../config/raven-config-schema.js';
import { SinkDelivery, type RoutedRecord } from './sink-delivery.js';
import type { RavenMetrics } from '../metrics/metrics.js';
import { buildSink, type BuildSinkOptions } from './build-sink.js';
import type { Sink } from '../sinks/sink.js';

/** How often sinks that overflowed are checked for a resync. */
export const RESYNC_CHECK_MS = 5_000;

export interface SinkDeliveriesOptions {
  clock: Clock;
  logger: Logger;
  metrics: RavenMetrics;
  /** Where a stdout sink writes (the process's stdout unless given). */
  stdout?: BuildSinkOptions['stdout'];
  /** Builds each sink from its config: `buildSink` unless given (tests give their own). */
  build?: (config: RavenConfig['sinks'][number]) => Sink;
}

export class SinkDeliveries {
  /** Each sink's delivery queue, by sink name, in config order. */
  readonly byName = new Map<string, SinkDelivery>();
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #overflowedAt = new Map<string, number>();
  #timer: TimerHandle | undefined;

  constructor(sinks: RavenConfig['sinks'], options: SinkDeliveriesOptions) {
    this.#clock = options.clock;
    this.#log = options.logger;
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
          onOverflow: () => {
            this.#overflowedAt.set(sink.name, this.#clock.now());
            this.#log.warn(
              { sink: sink.name },
              'sink fell behind its backlog limit; it will be resynced from its checkpoint',
            );
          },
        }),
      );
    }
  }

  /**
   * Check for overflowed sinks every {@link RESYNC_CHECK_MS} until {@link close}; an overflowed
   * sink is resynced with what `resyncOf(sink, overflowedAt)` computes.
   */
  watchOverflows(resyncOf: (sink: string, since: number | undefined) => RoutedRecord[]): void {
    const check = (): void => {
      for (const [sink, delivery] of this.byName) {
        if (delivery.state !== 'overflowed') continue;
        const items = resyncOf(sink, this.#overflowedAt.get(sink));
        this.#log.info({ sink, events: items.length }, 'resyncing sink from its checkpoint');
        delivery.resync(items);
      }
      this.#timer = this.#clock.setTimeout(check, RESYNC_CHECK_MS);
    };
    this.#timer = this.#clock.setTimeout(check, RESYNC_CHECK_MS);
  }

  /** Events held for every sink: queued, waiting to retry or in flight. */
  get backlog(): number {
    let n = 0;
    for (const delivery of this.byName.values()) n += delivery.backlog;
    return n;
  }

  /**
   * Stop the overflow checks and drain every sink, each within `deadlineMs`; what a sink did not
   * deliver in time is said once (it is found again at the next start: the checkpoint has not
   * recorded it). Resolves with the number of sinks drained.
   */
  async close(deadlineMs: number): Promise<number> {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
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
