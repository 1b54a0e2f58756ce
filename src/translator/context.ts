/**
 * What every reconcile of the translator shares: the OpenStack client, the settings, the cluster
 * infrastructure, the informers' caches, and the record of what is managed, pending and failing.
 */
import type { DeepReadonly } from '../cache/deep-freeze.js';
import type { StoreReader } from '../cache/store.js';
import type { KubeObject } from '../client/kube-object.js';
import type { OpenStackClient } from '../openstack/openstack-client.js';
import type { Logger } from '../util/logger.js';
import type { DriftReporter } from './drift.js';
import type { Infrastructure } from './infrastructure.js';
import type { NamespaceNetwork } from './namespace-network.js';
import type { PortBatcher } from './port-batcher.js';
import type { PortPools } from './port-pool.js';
import type { Port, PortCreate } from '../openstack/neutron-types.js';
import type { TranslatorSettings } from './settings.js';
import type { TranslationStatus } from './translation-status.js';

/** A merge patch on a Kubernetes object with the resourceVersion it was decided on (409 on a race). */
export type PatchObject = (
  kind: 'Pod' | 'Service',
  namespace: string,
  name: string,
  patch: object,
  options?: { subresource?: 'status' },
) => Promise<void>;

export interface TranslatorContext {
  os: OpenStackClient;
  settings: TranslatorSettings;
  infra: Infrastructure;
  namespaces: StoreReader<KubeObject>;
  pods: StoreReader<KubeObject>;
  services: StoreReader<KubeObject>;
  endpointSlices: StoreReader<KubeObject>;
  networkPolicies: StoreReader<KubeObject>;
  patch: PatchObject;
  status: TranslationStatus;
  /** What the translator knows of each namespace's network (by namespace name, for one uid). */
  namespaceNetworks: Map<string, { uid: string; network: NamespaceNetwork }>;
  /** The security group of each NetworkPolicy (by `namespace/name`, for one uid). */
  policyGroups: Map<string, { uid: string; id: string }>;
  /** Each namespace's pre-created ports (pools off: it only empties pools left from before). */
  portPools: PortPools;
  /** Pod ports created in bulk (absent when ports cannot take tags in the create body). */
  portBatcher?: PortBatcher<Port, PortCreate & { tags?: readonly string[] }> | undefined;
  logger: Logger;
  /**
   * Report one repair of what was changed in OpenStack outside Raven: logged once as a warning
   * ("drift repaired") and counted in `raven_translator_drift_repaired_total`. The resync pass
   * reports its repairs, and so does a reconcile that finds drift in what it had made (a rule of a
   * namespace's group).
   */
  driftRepaired: DriftReporter;
  signal: AbortSignal;
}

/** A cached object seen through the shape of its kind (caches hold every kind as KubeObject). */
export function asShape<T extends KubeObject>(
  object: DeepReadonly<KubeObject> | undefined,
): DeepReadonly<T> | undefined {
  return object as DeepReadonly<T> | undefined;
}
