/**
 * The OpenStack translator: Namespaces, Pods, Services, EndpointSlices and NetworkPolicies into
 * Neutron and Octavia, level-triggered. Each kind has a controller that computes the desired OpenStack state of one
 * object from the informers' caches and converges the actual state to it; a garbage collector finds
 * what belongs to objects that are gone; a resync pass every `resyncIntervalMs` compares what
 * OpenStack holds with what the cluster implies and repairs what was changed behind the
 * translator's back, with no event needed (`resync.ts`). It is meant to run as the one active translator of a
 * cluster (the daemon runs it under leader election).
 *
 * Ordering: a pod waits for its namespace's network; a namespace's network is removed after its
 * ports; every Octavia change waits for the load balancer to be ACTIVE; 409 and 404 mean what the
 * APIs say (exists / already gone). An unreachable OpenStack is retried with backoff while the
 * pending work stays in the queues.
 */
import type { DeepReadonly } from '../cache/deep-freeze.js';
import { makeObjectKey, type ObjectKey } from '../client/object-key.js';
import type { KubeClient } from '../client/kube-client.js';
import type { KubeObject } from '../client/kube-object.js';
import type { ResourceRef } from '../client/resource-path.js';
import { Controller } from '../controller/controller.js';
import { errorKind, isRetryable } from '../errors/classify.js';
import { SharedInformers } from '../informer/shared-informers.js';
import type { OpenStackClient } from '../openstack/openstack-client.js';
import { failed, type HandlerResult } from '../queue/handler-result.js';
import { systemClock, sleep, type Clock } from '../util/clock.js';
import { Backoff, type BackoffOptions } from '../util/backoff.js';
import { silentLogger, type Logger } from '../util/logger.js';
import type { TranslatorContext, PatchObject } from './context.js';
import type { DriftKind } from './drift.js';
import { collectGarbage, type Enqueue } from './garbage-collector.js';
import { ensureInfrastructure, type Infrastructure } from './infrastructure.js';
import { reconcileNamespace } from './namespace-translator.js';
import { reconcilePod } from './pod-translator.js';
import { PortBatcher } from './port-batcher.js';
import { PortPools } from './port-pool.js';
import { concernsPod, selectsPod, type PolicyShape } from './policy-rules.js';
import { reconcilePolicy } from './policy-translator.js';
import { resync, ResyncMemory } from './resync.js';
import { reconcileService } from './service-translator.js';
import type { TranslatorSettings } from './settings.js';
import { TranslationStatus } from './translation-status.js';

const NAMESPACES: ResourceRef = { group: '', version: 'v1', resource: 'namespaces', namespaced: false };
const PODS: ResourceRef = { group: '', version: 'v1', resource: 'pods', namespaced: true };
const SERVICES: ResourceRef = { group: '', version: 'v1', resource: 'services', namespaced: true };
const POLICIES: ResourceRef = {
  group: 'networking.k8s.io',
  version: 'v1',
  resource: 'networkpolicies',
  namespaced: true,
};
const SLICES: ResourceRef = {
  group: 'discovery.k8s.io',
  version: 'v1',
  resource: 'endpointslices',
  namespaced: true,
};

export interface TranslatorOptions {
  name: string;
  kube: KubeClient;
  openstack: OpenStackClient;
  settings: TranslatorSettings;
  clock?: Clock;
  logger?: Logger;
  /** Random numbers in [0, 1) for retry jitter; injected for tests. */
  random?: () => number;
}

/**
 * Retrying the cluster infrastructure while OpenStack is unreachable or refuses: 1 s doubling to
 * 30 s (each attempt is several calls, each already retried by the client), ±20 % jitter so
 * translators restarted together do not call in lock-step.
 */
const INFRASTRUCTURE_RETRY: BackoffOptions = { initialMs: 1_000, maxMs: 30_000, factor: 2, jitter: 0.2 };

export class Translator {
  readonly name: string;
  readonly status: TranslationStatus;
  /** The namespaces' pools of pre-created ports (and how many ports they gave out). */
  readonly portPools: PortPools;
  /** Drift repaired since start, by kind (`raven_translator_drift_repaired_total`). */
  readonly driftRepaired: Partial<Record<DriftKind, number>> = {};
  readonly #o: TranslatorOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  #infrastructure: Infrastructure | undefined;
  #lastError: string | undefined;
  #controllers: Controller<KubeObject>[] = [];

  constructor(options: TranslatorOptions) {
    this.#o = options;
    this.name = options.name;
    this.#clock = options.clock ?? systemClock;
    this.#log = (options.logger ?? silentLogger).child({ translator: options.name });
    this.status = new TranslationStatus(() => this.#clock.now());
    this.portPools = new PortPools(options.settings.portPool);
  }

  /** Synced and working: infrastructure in place and every controller healthy. */
  get ready(): boolean {
    return (
      this.#infrastructure !== undefined &&
      this.#controllers.length > 0 &&
      this.#controllers.every((c) => c.status().synced)
    );
  }

  /** Why it is not ready, for /readyz. */
  get problem(): string | undefined {
    if (this.#infrastructure === undefined) return this.#lastError ?? 'creating the cluster infrastructure';
    return this.#controllers.find((c) => !c.status().synced) === undefined ? undefined : 'caches not synced';
  }

  async run(signal: AbortSignal): Promise<void> {
    const infra = await this.#ensureInfrastructure(signal);
    if (infra === undefined) return;
    const informers = new SharedInformers({
      transport: this.#o.kube,
      clock: this.#clock,
      logger: this.#log,
      watcher: { dropManagedFields: true },
    });
    const namespaces = informers.informerFor({ resource: NAMESPACES });
    const pods = informers.informerFor({ resource: PODS });
    const services = informers.informerFor({ resource: SERVICES });
    const slices = informers.informerFor({ resource: SLICES });
    const policies = informers.informerFor({ resource: POLICIES });
    const ctx: TranslatorContext = {
      os: this.#o.openstack,
      settings: this.#o.settings,
      infra,
      namespaces: namespaces.store,
      pods: pods.store,
      services: services.store,
      endpointSlices: slices.store,
      networkPolicies: policies.store,
      patch: this.#patcher(),
      status: this.status,
      namespaceNetworks: new Map(),
      policyGroups: new Map(),
      portPools: this.portPools,
      portBatcher: this.#o.openstack.neutron.ports.tagsOnCreate
        ? new PortBatcher(this.#o.openstack.neutron.ports)
        : undefined,
      logger: this.#log,
      driftRepaired: (kind, owner, what) => {
        this.driftRepaired[kind] = (this.driftRepaired[kind] ?? 0) + 1;
        this.#log.warn(
          { kind, owner: `${owner.kind}/${owner.key}`, drift: what },
          'drift repaired: OpenStack was changed outside Raven',
        );
      },
      signal,
    };
    const guarded =
      (
        kind: string,
        reconcile: (key: string, ctx: TranslatorContext) => Promise<HandlerResult | undefined>,
      ) =>
      async (key: ObjectKey): Promise<HandlerResult | undefined> => {
        this.status.started(kind, key);
        try {
          return await reconcile(key, ctx);
        } catch (error) {
          // Keep the OpenStack error on the object so status and logs say what is wrong.
          const message = error instanceof Error ? error.message : String(error);
          this.status.failing(kind, key, message);
          this.#log.warn(
            { kind, key, err: message, retryable: isRetryable(error), kindOfError: errorKind(error) },
            'translation failed; will retry',
          );
          return failed(error);
        } finally {
          this.status.finished(kind, key);
        }
      };
    const common = { clock: this.#clock, logger: this.#log, workers: this.#o.settings.workers };
    // A namespace waits for its pods' ports only while it is being taken apart: a pod's change
    // concerns its namespace only then (otherwise every pod event would re-check the network).
    const byNamespace = (o: DeepReadonly<KubeObject>): ObjectKey[] => {
      const name = o.metadata?.namespace;
      if (name === undefined) return [];
      const ns = namespaces.store.get(makeObjectKey(name));
      return ns === undefined || ns.metadata?.deletionTimestamp !== undefined ? [makeObjectKey(name)] : [];
    };
    const namespaceController = new Controller({
      ...common,
      name: 'namespaces',
      primary: namespaces,
      reconcile: guarded('Namespace', reconcileNamespace),
      watches: [{ informer: pods, map: byNamespace }],
    });
    this.portPools.onRefillFailure = (name) => namespaceController.enqueue(makeObjectKey(name));
    const podController = new Controller({
      ...common,
      name: 'pods',
      primary: pods,
      reconcile: guarded('Pod', reconcilePod),
      watches: [
        {
          informer: namespaces,
          map: (ns) =>
            pods.store
              .byIndex('namespace', ns.metadata?.name ?? '')
              .map((p) => makeObjectKey(p.metadata?.name ?? '', p.metadata?.namespace)),
        },
        // A policy's change moves the pods it selects (before or after) in or out of its group.
        {
          informer: policies,
          map: (policy) =>
            pods.store
              .byIndex('namespace', policy.metadata?.namespace ?? '')
              .filter((p) => selectsPod(policy as DeepReadonly<PolicyShape>, p))
              .map((p) => makeObjectKey(p.metadata?.name ?? '', p.metadata?.namespace)),
        },
      ],
    });
    const allPolicies = (): ObjectKey[] =>
      policies.store.list().map((p) => makeObjectKey(p.metadata?.name ?? '', p.metadata?.namespace));
    const policyController = new Controller({
      ...common,
      name: 'networkpolicies',
      primary: policies,
      reconcile: guarded('NetworkPolicy', reconcilePolicy),
      watches: [
        // A pod's labels, port address or named ports feed the rules of the policies naming it.
        {
          informer: pods,
          map: (p) =>
            policies.store
              .list()
              .filter((policy) => concernsPod(policy as DeepReadonly<PolicyShape>, p))
              .map((policy) => makeObjectKey(policy.metadata?.name ?? '', policy.metadata?.namespace)),
        },
        // A namespace's labels decide namespace selectors; its subnet is what they become.
        { informer: namespaces, map: allPolicies },
      ],
    });
    const serviceController = new Controller({
      ...common,
      name: 'services',
      primary: services,
      reconcile: guarded('Service', reconcileService),
      watches: [
        {
          informer: slices,
          map: (s) => {
            const svc = s.metadata?.labels?.['kubernetes.io/service-name'];
            return svc === undefined ? [] : [makeObjectKey(svc, s.metadata?.namespace)];
          },
        },
        // A pod's port address feeds the members of the Services whose endpoints name it.
        {
          informer: pods,
          map: (p) => servicesOfPod(slices.store.byIndex('namespace', p.metadata?.namespace ?? ''), p),
        },
      ],
    });
    this.#controllers = [namespaceController, podController, serviceController, policyController];
    informers.start(signal);
    const runs = this.#controllers.map((c) => c.run(signal));
    const enqueue = this.#enqueuer({
      namespaces: namespaceController,
      pods: podController,
      services: serviceController,
      policies: policyController,
    });
    const gc = this.#gcLoop(ctx, informers, enqueue, signal);
    const resync = this.#resyncLoop(ctx, informers, enqueue, signal);
    await Promise.all([...runs, gc, resync]);
    await informers.stopped();
  }

  async #ensureInfrastructure(signal: AbortSignal): Promise<Infrastructure | undefined> {
    const backoff = new Backoff({ ...INFRASTRUCTURE_RETRY, random: this.#o.random ?? Math.random });
    while (!signal.aborted) {
      try {
        const projectId = await this.#o.openstack.projectId(signal);
        this.#infrastructure = await ensureInfrastructure(this.#o.openstack, this.#o.settings, projectId);
        this.#lastError = undefined;
        this.#log.info({ ...this.#infrastructure }, 'cluster infrastructure ready');
        return this.#infrastructure;
      } catch (error) {
        this.#lastError = error instanceof Error ? error.message : String(error);
        const delay = backoff.fail();
        this.#log.error(
          { err: this.#lastError, retryInMs: delay },
          'cannot set up the cluster infrastructure in OpenStack; retrying',
        );
        try {
          await sleep(this.#clock, delay, signal);
        } catch {
          return undefined;
        }
      }
    }
    return undefined;
  }

  /** Hands a key to the controller of its kind. */
  #enqueuer(controllers: {
    namespaces: Controller<KubeObject>;
    pods: Controller<KubeObject>;
    services: Controller<KubeObject>;
    policies: Controller<KubeObject>;
  }): Enqueue {
    return (kind, key) => {
      const target =
        kind === 'Namespace'
          ? controllers.namespaces
          : kind === 'Pod'
            ? controllers.pods
            : kind === 'NetworkPolicy'
              ? controllers.policies
              : controllers.services;
      target.enqueue(key as ObjectKey);
    };
  }

  async #gcLoop(
    ctx: TranslatorContext,
    informers: SharedInformers,
    enqueue: Enqueue,
    signal: AbortSignal,
  ): Promise<void> {
    try {
      await informers.waitForSync(signal);
      for (;;) {
        try {
          await collectGarbage(ctx, enqueue);
        } catch (error) {
          this.#log.warn(
            { err: error instanceof Error ? error.message : String(error) },
            'garbage collection failed; will try again',
          );
        }
        await sleep(this.#clock, this.#o.settings.gcIntervalMs, signal);
      }
    } catch {
      // Aborted: stopping.
    }
  }

  /**
   * Every `resyncIntervalMs` (not at start: the caches' first sync reconciles every object), what
   * OpenStack holds is compared with what the cluster implies and drift is repaired (`resync.ts`).
   */
  async #resyncLoop(
    ctx: TranslatorContext,
    informers: SharedInformers,
    enqueue: Enqueue,
    signal: AbortSignal,
  ): Promise<void> {
    const period = this.#o.settings.resyncIntervalMs;
    if (period <= 0) return;
    const memory = new ResyncMemory();
    const deps = {
      enqueue,
      clock: this.#clock,
      repairInfrastructure: async () => {
        // The same find-or-create as at start: what is there is kept, what is missing is made.
        const infra = await ensureInfrastructure(this.#o.openstack, this.#o.settings, ctx.infra.projectId);
        Object.assign(ctx.infra, infra);
      },
    };
    try {
      await informers.waitForSync(signal);
      for (;;) {
        await sleep(this.#clock, period, signal);
        try {
          const pass = await resync(ctx, memory, deps);
          this.#log.debug({ ...pass }, 'resync pass done');
        } catch (error) {
          this.#log.warn(
            { err: error instanceof Error ? error.message : String(error) },
            'resync pass failed; will try again next period',
          );
        }
      }
    } catch {
      // Aborted: stopping.
    }
  }

  #patcher(): PatchObject {
    return async (kind, namespace, name, patch, options = {}) => {
      const plural = kind === 'Pod' ? 'pods' : 'services';
      const sub = options.subresource === undefined ? '' : `/${options.subresource}`;
      await this.#o.kube.request({
        method: 'PATCH',
        path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/${plural}/${encodeURIComponent(name)}${sub}`,
        body: patch,
        contentType: 'application/merge-patch+json',
      });
    };
  }
}

function servicesOfPod(slices: DeepReadonly<KubeObject>[], pod: DeepReadonly<KubeObject>): ObjectKey[] {
  const keys: ObjectKey[] = [];
  for (const slice of slices as DeepReadonly<
    KubeObject & { endpoints?: { targetRef?: { kind?: string; name?: string } }[] }
  >[]) {
    const svc = slice.metadata?.labels?.['kubernetes.io/service-name'];
    if (svc === undefined) continue;
    if (
      (slice.endpoints ?? []).some(
        (e) => e.targetRef?.kind === 'Pod' && e.targetRef.name === pod.metadata?.name,
      )
    )
      keys.push(makeObjectKey(svc, slice.metadata?.namespace));
  }
  return keys;
}
