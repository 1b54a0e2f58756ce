/**
 * One replica of the ReplicaKeeper controller: install the definition if missing, then campaign
 * for the Lease and, while leading, run informers and the control loop. Several replicas can run
 * at once; exactly one reconciles.
 *
 * Each leadership term starts from fresh caches and stops completely when it ends: a replica that
 * lost the lease keeps nothing from its term, and one that regains it starts over from a full list.
 * A reconcile still in flight when leadership ends gets `leaseDuration - renewDeadline` to finish
 * (then its requests are aborted), which is the time before any successor can have taken over.
 * When `signal` aborts, the term stops, the lease is released (so a standby takes over at its next
 * retry instead of waiting for expiry), and the returned promise resolves.
 */
import { dropManagedFields } from '../../src/watch/decode/drop-managed-fields.js';
import type { KubeClient } from '../../src/client/kube-client.js';
import { LeaderElector } from '../../src/controller/leader-election.js';
import { SharedInformers } from '../../src/informer/shared-informers.js';
import { systemClock, type Clock } from '../../src/util/clock.js';
import { silentLogger, type Logger } from '../../src/util/logger.js';
import { installReplicaKeeperCrd } from './replica-keeper.js';
import { ReplicationController } from './replication-controller.js';

export interface RunControllerOptions {
  client: KubeClient;
  /** Where the ReplicaKeepers (and their pods) live. */
  namespace: string;
  /** This replica's name in the Lease; unique per replica. */
  identity: string;
  /** Default: `namespace`. */
  leaseNamespace?: string;
  /** Default `replica-keeper-controller`. */
  leaseName?: string;
  /** Defaults 15 000 / 10 000 / 2 000 ms. */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  workers?: number;
  /** Skip installing the ReplicaKeeper definition (when RBAC does not allow it). */
  skipCrdInstall?: boolean;
  clock?: Clock;
  logger?: Logger;
}

export const defaultLeaseName = 'replica-keeper-controller';

/**
 * Run until `signal` aborts; rejects only if installing the definition fails or a leadership term
 * fails unexpectedly (after releasing the lease, so that another replica takes over).
 *
 * @example
 * const stop = new AbortController();
 * process.once('SIGTERM', () => stop.abort());
 * await runController({ client, namespace: 'shop', identity: hostname() }, stop.signal);
 */
export async function runController(options: RunControllerOptions, signal: AbortSignal): Promise<void> {
  const log = options.logger ?? silentLogger;
  const clock = options.clock ?? systemClock;
  const leaseDurationMs = options.leaseDurationMs ?? 15_000;
  const renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
  // Aborted by the caller, or by a term that failed: a leader that cannot work must not lead.
  const stop = new AbortController();
  let termError: Error | undefined;

  const term = async (leading: AbortSignal): Promise<void> => {
    const informers = new SharedInformers({
      transport: options.client,
      transform: dropManagedFields,
      clock,
      logger: log,
    });
    try {
      const controller = new ReplicationController({
        client: options.client,
        informers,
        namespace: options.namespace,
        shutdownDeadlineMs: leaseDurationMs - renewDeadlineMs,
        clock,
        logger: log,
        ...(options.workers === undefined ? {} : { workers: options.workers }),
      });
      informers.start(leading);
      await controller.run(leading);
    } catch (err) {
      termError = err instanceof Error ? err : new Error(String(err));
      log.error(
        { err: err instanceof Error ? err.message : String(err) },
        'leadership term failed; stepping down',
      );
      stop.abort(err);
    } finally {
      await informers.stopped();
    }
  };

  const elector = new LeaderElector({
    client: options.client,
    namespace: options.leaseNamespace ?? options.namespace,
    name: options.leaseName ?? defaultLeaseName,
    identity: options.identity,
    leaseDurationMs,
    renewDeadlineMs,
    ...(options.retryPeriodMs === undefined ? {} : { retryPeriodMs: options.retryPeriodMs }),
    onStartedLeading: term,
    onNewLeader: (leader) => log.info({ leader }, 'new leader observed'),
    clock,
    logger: log,
  });
  const forward = (): void => stop.abort(signal.reason);
  if (signal.aborted) forward();
  signal.addEventListener('abort', forward, { once: true });
  try {
    // After constructing the elector, which rejects bad timings before anything is written.
    if (options.skipCrdInstall !== true)
      await installReplicaKeeperCrd(options.client, { signal, logger: log, clock });
    await elector.run(stop.signal);
  } finally {
    signal.removeEventListener('abort', forward);
  }
  if (termError !== undefined) throw termError;
}
