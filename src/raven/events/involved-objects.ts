/**
 * The shared cache of the objects Kubernetes Events are about: one metadata-only informer per
 * configured kind (and namespace scope), shared by every events watcher, so enriching an Event with
 * its object's labels, annotations and owner never costs a request. Only metadata is kept (name,
 * uid, labels, annotations, owner references): a cluster's Pods cost a few hundred bytes each.
 *
 * Enrichment reads the cache as it is when the Event arrives: an object the cache does not hold
 * (a kind not configured, or one created so recently its watch has not brought it yet) is reported
 * with `found: false` and no labels; it never delays or drops the Event.
 */
import type { ResolvedResource } from '../../client/api-resource.js';
import type { KubeObject } from '../../client/kube-object.js';
import { makeObjectKey } from '../../client/object-key.js';
import type { Informer } from '../../informer/informer.js';
import { SharedInformers } from '../../informer/shared-informers.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import type { WatchTransport } from '../../watch/watcher.js';
import type { NamespaceScopeSpec } from '../../watch/scope/namespace-scope.js';
import type { InvolvedObject } from '../model/event-occurrence.js';

/** Owner chains deeper than this are not followed (Pod → ReplicaSet → Deployment is 2). */
const MAX_OWNER_DEPTH = 5;

interface OwnerReference {
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
}

/** Keep what enrichment reads; the rest of each object is dropped before it is cached. */
function metadataOnly<T extends KubeObject>(object: T): T {
  const m = object.metadata;
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: {
      name: m?.name,
      namespace: m?.namespace,
      uid: m?.uid,
      resourceVersion: m?.resourceVersion,
      labels: m?.labels,
      annotations: m?.annotations,
      ownerReferences: m?.ownerReferences,
    },
  } as T;
}

export interface InvolvedObjectsOptions {
  transport: WatchTransport;
  clock: Clock;
  logger: Logger;
}

export class InvolvedObjects {
  readonly #informers: SharedInformers;
  /** kind → its informers (one per namespace scope asked for). */
  readonly #byKind = new Map<string, Informer<KubeObject>[]>();

  constructor(options: InvolvedObjectsOptions) {
    this.#informers = new SharedInformers({
      transport: options.transport,
      transform: metadataOnly,
      clock: options.clock,
      logger: options.logger,
    });
  }

  /** Cache `resource` (a resolved kind) in `namespaces` ([] for all). */
  add(resource: ResolvedResource, namespaces: NamespaceScopeSpec): void {
    const informer = this.#informers.informerFor({
      resource,
      ...(resource.namespaced ? { namespaces } : {}),
    });
    const list = this.#byKind.get(resource.kind) ?? [];
    if (!list.includes(informer)) list.push(informer);
    this.#byKind.set(resource.kind, list);
  }

  get kinds(): string[] {
    return [...this.#byKind.keys()];
  }

  /** Run the informers until `signal` aborts, and resolve once each has listed. */
  async start(signal: AbortSignal): Promise<void> {
    this.#informers.start(signal);
    await this.#informers.waitForSync(signal);
  }

  async stopped(): Promise<void> {
    await this.#informers.stopped();
  }

  /** The involved object with what the cache holds of it. */
  enrich(involved: InvolvedObject): InvolvedObject {
    const object = this.#get(involved.kind, involved.namespace, involved.name);
    if (object === undefined || (involved.uid !== undefined && object.metadata?.uid !== involved.uid))
      return involved;
    const m = object.metadata;
    return {
      ...involved,
      labels: { ...(m?.labels ?? {}) },
      annotations: { ...(m?.annotations ?? {}) },
      owner: this.#topOwner(object),
      found: true,
    };
  }

  #get(kind: string, namespace: string | undefined, name: string): KubeObject | undefined {
    for (const informer of this.#byKind.get(kind) ?? []) {
      // A cluster-scoped object's key has no namespace, whatever the Event says.
      const found =
        informer.store.get(makeObjectKey(name, namespace)) ??
        informer.store.get(makeObjectKey(name, undefined));
      if (found !== undefined) return found as KubeObject;
    }
    return undefined;
  }

  /** Follow controller owner references up while the cache holds the owners. */
  #topOwner(object: KubeObject): InvolvedObject['owner'] {
    let owner: InvolvedObject['owner'];
    let current = object;
    for (let depth = 0; depth < MAX_OWNER_DEPTH; depth++) {
      const refs = (current.metadata?.ownerReferences ?? []) as readonly OwnerReference[];
      const ref = refs.find((r) => r.controller === true) ?? refs[0];
      if (ref?.kind === undefined || ref.name === undefined) break;
      owner = { kind: ref.kind, name: ref.name, uid: ref.uid };
      const next = this.#get(ref.kind, current.metadata?.namespace, ref.name);
      if (next === undefined) break;
      current = next;
    }
    return owner;
  }
}
