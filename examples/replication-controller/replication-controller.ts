/**
 * The replication control loop: for every ReplicaKeeper, observe the pods it controls, compare
 * with `spec.replicas`, and act — create the missing pods from the template, delete the extras
 * (newest first) — then report what was observed in `status.replicas`.
 *
 * Level-triggered: reconcile reads only the informers' caches and never a single event, so a
 * missed, repeated or reordered event changes nothing; it is triggered by the keeper itself and by
 * any change to a pod whose controller ownerReference names a ReplicaKeeper. Writes the cache has
 * not confirmed yet are counted through {@link Expectations}, so a lagging cache never causes
 * extra pods. The status is written with the resourceVersion it was computed from (409 when the
 * keeper changed meanwhile; the change re-triggers reconcile anyway).
 *
 * Pods are matched by their controller ownerReference's uid (an index on the pods cache) and the
 * selector; pods that match the selector without being controlled by a keeper are left alone.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { DeepReadonly } from '../../src/cache/deep-freeze.js';
import { objectKey, parseObjectKey, type ObjectKey } from '../../src/client/object-key.js';
import type { KubeClient } from '../../src/client/kube-client.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { Controller, type ControllerStatus, type ReconcileContext } from '../../src/controller/controller.js';
import { isConflict, isNotFound } from '../../src/errors/classify.js';
import type { Informer } from '../../src/informer/informer.js';
import type { SharedInformers } from '../../src/informer/shared-informers.js';
import { done, failed, requeueAfter, type HandlerResult } from '../../src/queue/handler-result.js';
import { systemClock, type Clock } from '../../src/util/clock.js';
import { silentLogger, type Logger } from '../../src/util/logger.js';
import { Expectations } from './expectations.js';
import {
  pods as podsRef,
  replicaKeeperApiVersion,
  replicaKeeperKind,
  replicaKeepers,
  type ReplicaKeeper,
} from './replica-keeper.js';

export interface ReplicationControllerOptions {
  client: KubeClient;
  informers: SharedInformers;
  /** The namespace whose keepers (and pods) this controller manages. */
  namespace: string;
  workers?: number;
  /** How long a reconcile in flight may finish after the controller is told to stop. */
  shutdownDeadlineMs?: number;
  /** Most pods created or deleted by one reconcile; the rest follow on the next. Default 100. */
  burst?: number;
  /** How long an unconfirmed write is trusted over the cache; default 60 s. */
  expectationTtlMs?: number;
  clock?: Clock;
  logger?: Logger;
}

/** Name of the pods-cache index from a controller ownerReference's uid to its pods. */
const byController = 'controller-uid';

/** A conflict on the status write means the keeper changed; its update event re-triggers us. */
const conflictRetryMs = 200;

export class ReplicationController {
  readonly #o: ReplicationControllerOptions;
  readonly #keepers: Informer<ReplicaKeeper>;
  readonly #pods: Informer<Pod>;
  readonly #expectations: Expectations;
  readonly #controller: Controller<ReplicaKeeper>;
  readonly #podClient: ResourceClient<Pod>;
  readonly #keeperClient: ResourceClient<ReplicaKeeper>;

  constructor(options: ReplicationControllerOptions) {
    this.#o = options;
    const { informers, namespace } = options;
    this.#keepers = informers.informerFor<ReplicaKeeper>({ resource: replicaKeepers, namespaces: namespace });
    this.#pods = informers.informerFor<Pod>(
      { resource: podsRef, namespaces: namespace },
      { [byController]: controllerUid },
    );
    this.#expectations = new Expectations(options.clock ?? systemClock, options.expectationTtlMs ?? 60_000);
    this.#podClient = new ResourceClient<Pod>(options.client, podsRef);
    this.#keeperClient = new ResourceClient<ReplicaKeeper>(options.client, replicaKeepers);
    this.#controller = new Controller<ReplicaKeeper>({
      name: 'replica-keeper',
      primary: this.#keepers,
      owns: [this.#pods],
      ownerKind: replicaKeeperKind,
      reconcile: (key, context) => this.#reconcile(key, context),
      workers: options.workers ?? 2,
      shutdownDeadlineMs: options.shutdownDeadlineMs ?? 10_000,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      logger: options.logger ?? silentLogger,
    });
  }

  status(): ControllerStatus {
    return this.#controller.status();
  }

  /** Reconcile until `signal` aborts (the informers must be started by the caller). */
  async run(signal: AbortSignal): Promise<void> {
    const confirmations = this.#pods.addEventHandler({
      add: (pod) => this.#expectations.observe(objectKey(pod), present(pod) ? 'present' : 'gone'),
      update: (_, pod) => {
        if (!present(pod)) this.#expectations.observe(objectKey(pod), 'gone');
      },
      delete: (pod) => this.#expectations.observe(objectKey(pod), 'gone'),
    });
    try {
      await this.#controller.run(signal);
    } finally {
      confirmations.remove();
    }
  }

  async #reconcile(key: ObjectKey, { signal, logger }: ReconcileContext): Promise<HandlerResult> {
    const keeper = this.#keepers.store.get(key);
    if (keeper === undefined) {
      this.#expectations.forget(key);
      return done();
    }
    // Deleting: the garbage collector removes the pods through their ownerReferences.
    if (keeper.metadata?.deletionTimestamp !== undefined) return done();
    const spec = keeper.spec;
    const uid = keeper.metadata?.uid;
    if (spec === undefined || uid === undefined) return done();

    const selector = spec.selector.matchLabels;
    const active = this.#pods.store
      .byIndex(byController, uid)
      .filter((pod) => present(pod) && matches(selector, pod.metadata?.labels));
    const activeKeys = new Set(active.map((pod) => objectKey(pod)));
    const { creating, deleting } = this.#expectations.pending(key, activeKeys);
    const surviving = active.filter((pod) => !deleting.has(objectKey(pod)));
    const diff = spec.replicas - (surviving.length + creating.size);
    const burst = this.#o.burst ?? 100;

    let failure: unknown;
    if (diff > 0) failure = await this.#create(key, keeper, Math.min(diff, burst), signal, logger);
    if (diff < 0) {
      const victims = newestFirst(surviving).slice(0, Math.min(-diff, burst));
      failure = await this.#delete(key, victims, signal, logger);
    }
    if (failure !== undefined) return failed(failure);

    return this.#writeStatus(keeper, active.length, signal, logger);
  }

  /** Create `count` pods from the template; returns the first error, if any. */
  async #create(
    owner: ObjectKey,
    keeper: DeepReadonly<ReplicaKeeper>,
    count: number,
    signal: AbortSignal,
    logger: Logger,
  ): Promise<unknown> {
    const body = podFromTemplate(keeper as ReplicaKeeper);
    const results = await Promise.allSettled(
      Array.from({ length: count }, async () => {
        const pod = await this.#podClient.create(body, { signal });
        this.#expectations.expect(owner, objectKey(pod), 'create');
        logger.info({ pod: pod.metadata?.name }, 'created pod');
      }),
    );
    return results.find((r) => r.status === 'rejected')?.reason;
  }

  /** Delete the given pods (guarded by uid, so a same-named successor is never hit). */
  async #delete(
    owner: ObjectKey,
    victims: readonly DeepReadonly<Pod>[],
    signal: AbortSignal,
    logger: Logger,
  ): Promise<unknown> {
    const results = await Promise.allSettled(
      victims.map(async (pod) => {
        const podKey = objectKey(pod);
        const { name, namespace } = parseObjectKey(podKey);
        const uid = pod.metadata?.uid;
        this.#expectations.expect(owner, podKey, 'delete');
        try {
          await this.#podClient.delete(name, {
            ...(namespace === undefined ? {} : { namespace }),
            signal,
            preconditions: { ...(uid === undefined ? {} : { uid }) },
          });
          logger.info({ pod: name }, 'deleted pod');
        } catch (err) {
          // Already gone (or replaced by a namesake, 409): either way this pod no longer counts.
          if (isNotFound(err) || isConflict(err)) return;
          this.#expectations.cancel(podKey);
          throw err;
        }
      }),
    );
    return results.find((r) => r.status === 'rejected')?.reason;
  }

  /** Report the observed count, conditional on the resourceVersion it was computed from. */
  async #writeStatus(
    keeper: DeepReadonly<ReplicaKeeper>,
    replicas: number,
    signal: AbortSignal,
    logger: Logger,
  ): Promise<HandlerResult> {
    const generation = keeper.metadata?.generation;
    if (keeper.status?.replicas === replicas && keeper.status.observedGeneration === generation)
      return done();
    const name = keeper.metadata?.name ?? '';
    const namespace = keeper.metadata?.namespace;
    try {
      await this.#keeperClient.replace(
        name,
        {
          ...(keeper as ReplicaKeeper),
          status: { replicas, ...(generation === undefined ? {} : { observedGeneration: generation }) },
        },
        { subresource: 'status', ...(namespace === undefined ? {} : { namespace }), signal },
      );
      logger.debug({ replicas }, 'status written');
      return done();
    } catch (err) {
      if (isNotFound(err)) return done();
      if (isConflict(err)) return requeueAfter(conflictRetryMs);
      return failed(err);
    }
  }
}

/** The new pod: the template's labels and spec, a generated name, controlled by the keeper. */
export function podFromTemplate(keeper: ReplicaKeeper): Pod {
  const name = keeper.metadata?.name ?? '';
  const template = keeper.spec?.template;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${name}-`,
      ...(keeper.metadata?.namespace === undefined ? {} : { namespace: keeper.metadata.namespace }),
      labels: { ...template?.metadata.labels },
      ...(template?.metadata.annotations === undefined
        ? {}
        : { annotations: { ...template.metadata.annotations } }),
      ownerReferences: [
        {
          apiVersion: replicaKeeperApiVersion,
          kind: replicaKeeperKind,
          name,
          uid: keeper.metadata?.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    ...(template?.spec === undefined ? {} : { spec: template.spec }),
  };
}

function controllerOf(pod: DeepReadonly<Pod>): { readonly uid: string } | undefined {
  return pod.metadata?.ownerReferences?.find(
    (ref) => ref.controller === true && ref.kind === replicaKeeperKind,
  );
}

function controllerUid(pod: DeepReadonly<Pod>): string[] {
  const uid = controllerOf(pod)?.uid;
  return uid === undefined ? [] : [uid];
}

/** Not terminating: a pod with a deletionTimestamp is on its way out and no longer counts. */
function present(pod: DeepReadonly<Pod>): boolean {
  return pod.metadata?.deletionTimestamp === undefined;
}

function matches(
  selector: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

/** Newest first by creationTimestamp (second resolution), then by name for a stable order. */
function newestFirst(pods: readonly DeepReadonly<Pod>[]): DeepReadonly<Pod>[] {
  return [...pods].sort(
    (a, b) =>
      (b.metadata?.creationTimestamp ?? '').localeCompare(a.metadata?.creationTimestamp ?? '') ||
      (b.metadata?.name ?? '').localeCompare(a.metadata?.name ?? ''),
  );
}
