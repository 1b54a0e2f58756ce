/**
 * A sharded daemon replica's loop: it is a member of a LeaseGroup and does the work of the parts
 * of the hash space `assignBuckets` gives it among the members. When its parts change, its work
 * stops (deliveries drain, the checkpoint is written) and starts again on the new parts, resuming
 * from what the parts' owners confirmed. The group is left only after the work has stopped, so
 * nobody takes a part while this replica still delivers its changes.
 *
 * The work itself (watchers, sinks, checkpoint on the parts' fences) is the daemon's; this file
 * decides only when it runs and on which parts.
 */
import type { LeaseClient } from '../controller/leader-election.js';
import { LeaseGroup } from '../controller/lease-group.js';
import { sleep, type Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { assignBuckets } from '../watch/shard/assign-hash-space.js';
import { leaseTimingsMs, type ShardingConfig } from './config/raven-config-schema.js';

export interface ShardedReplicaOptions {
  client: LeaseClient;
  config: ShardingConfig;
  clock: Clock;
  logger: Logger;
  random?: () => number;
  /** The work on `parts` (sorted bucket numbers) until `signal` aborts; it resolves once drained. */
  work(parts: readonly number[], signal: AbortSignal): Promise<void>;
  /** The members changed (sorted identities). */
  onMembers?(members: readonly string[]): void;
  /** Work started on `parts`, or stopped (`parts` empty). */
  onParts?(parts: readonly number[]): void;
}

interface Current {
  parts: readonly number[];
  stop: AbortController;
  done: Promise<void>;
  ended: boolean;
}

/**
 * Run until `signal` aborts, then stop the work and leave the group. A failure of the work is
 * followed by a fresh start after the retry period; a failure of the group is thrown.
 */
export async function runShardedReplica(options: ShardedReplicaOptions, signal: AbortSignal): Promise<void> {
  const sh = options.config;
  const log = options.logger.child({ group: sh.group, identity: sh.identity });
  let members: readonly string[] | undefined;
  /** Bumped at every change of the members: a change while the loop was busy is not missed. */
  let seen = 0;
  let version = 0;
  let wake: (() => void) | undefined;
  const poke = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  signal.addEventListener('abort', poke, { once: true });
  // Read through a call: the signal may abort during any await of the loop.
  const stopped = (): boolean => signal.aborted;
  const leaving = new AbortController();
  const group = new LeaseGroup({
    client: options.client,
    namespace: sh.namespace,
    group: sh.group,
    identity: sh.identity,
    ...leaseTimingsMs(sh),
    clock: options.clock,
    logger: log,
    ...(options.random === undefined ? {} : { random: options.random }),
    onChange: (now) => {
      members = now;
      version++;
      options.onMembers?.(now);
      poke();
    },
  });
  const failed: { error?: Error } = {};
  const membership = group.run(leaving.signal).catch((error: unknown) => {
    failed.error = error instanceof Error ? error : new Error(String(error));
    poke();
  });
  const groupFailure = (): Error | undefined => failed.error;
  let settledView: string | undefined;
  /** Publish `view` as the one this replica's work runs for, waiting at most a retry period. */
  const settle = async (view: readonly string[]): Promise<void> => {
    const key = view.join(',');
    if (key === settledView) return;
    settledView = key;
    const bound = new AbortController();
    await Promise.race([
      group.settle(view),
      sleep(options.clock, sh.retryPeriodSeconds * 1000, bound.signal).catch(() => undefined),
    ]);
    bound.abort();
  };
  let current: Current | undefined;
  const stopCurrent = async (): Promise<void> => {
    if (current === undefined) return;
    const stopping = current;
    current = undefined;
    stopping.stop.abort(new Error('the parts of this replica changed'));
    try {
      await stopping.done;
    } finally {
      options.onParts?.([]);
    }
  };
  try {
    while (!signal.aborted) {
      const failure = groupFailure();
      if (failure !== undefined) throw failure;
      if (current?.ended === true) {
        // Its checkpoint was fenced (a part was taken; the members are about to change) or it
        // failed (rethrown here): start again on the parts as they are then.
        await stopCurrent();
        log.warn({}, 'the work on this replica’s parts stopped; starting again');
        await sleep(options.clock, sh.retryPeriodSeconds * 1000, signal).catch(() => undefined);
        continue;
      }
      seen = version;
      const view = members;
      const parts = view === undefined ? [] : (assignBuckets(view, sh.buckets).get(sh.identity) ?? []);
      if (current === undefined || !sameParts(current.parts, parts)) {
        await stopCurrent();
        // The parts given up are drained: say so before taking any, so a member that joins
        // takes its share as soon as every member has given it up (lease-group.ts).
        if (view !== undefined && !stopped()) await settle(view);
        if (parts.length > 0 && !stopped()) {
          log.info(
            { members, parts, buckets: sh.buckets },
            'watching this replica’s parts of the hash space',
          );
          const stop = new AbortController();
          options.onParts?.(parts);
          const work: Current = { parts, stop, ended: false, done: Promise.resolve() };
          work.done = options.work(parts, stop.signal).finally(() => {
            work.ended = true;
            poke();
          });
          // Its failure is taken when it is awaited (stopCurrent); until then it is not unhandled.
          work.done.catch(() => undefined);
          current = work;
        } else if (members !== undefined)
          log.info({ members }, 'no part of the hash space is this replica’s: watching nothing');
      } else if (view !== undefined && !stopped()) await settle(view);
      if (version === seen && !stopped() && current?.ended !== true && groupFailure() === undefined)
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
    }
  } finally {
    signal.removeEventListener('abort', poke);
    await stopCurrent().finally(() => {
      leaving.abort();
    });
    await membership;
  }
}

/** Whether two sorted lists of parts are the same. */
function sameParts(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((part, i) => part === b[i]);
}
