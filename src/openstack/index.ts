/**
 * The OpenStack client, as `kube-raven/openstack`: Keystone auth, Neutron, Octavia. Re-exports only.
 *
 * What a user builds with: the factory, the config parser, the errors and their predicates, and
 * the types of what the client hands back (collections, resources, the load-balancer waiter).
 * Classes a user never constructs are exported as types (the client comes from
 * `createOpenStackClient`, its collections from the client); the transport underneath (sessions,
 * the service catalogue, the HTTP exchange, the retry policy) stays internal; only the types
 * the exported signatures use (`ServiceTransport`, `CollectionSpec`, `WaiterDeps`) are named.
 */
export {
  createOpenStackClient,
  type OpenStackClient,
  type OpenStackClientOptions,
} from './openstack-client.js';
export {
  parseOpenStackConfig,
  type OpenStackConfig,
  type OpenStackConfigInput,
  type OpenStackAuthConfig,
  type RetryConfig,
} from './openstack-config.js';
export type { openStackConfigSchema } from './openstack-config.js';
export type { ConfigPath } from '../errors/config-path.js';
export {
  OpenStackError,
  OpenStackProvisioningError,
  type OpenStackErrorOptions,
  type OpenStackFault,
  type OpenStackService,
  type ResourceRef,
} from '../errors/openstack-error.js';
export type {
  RestCollection,
  CallOptions,
  ListOptions,
  Filters,
  DeleteOutcome,
  Identified,
  CollectionSpec,
} from './rest-collection.js';
export type { QueryParams, QueryValue, ServiceCall, ServiceTransport } from './openstack-transport.js';
export type { ServiceType } from './auth-session.js';
export type { WireAnswer } from './http-exchange.js';
export {
  portAddresses,
  type NeutronClient,
  type RouterCollection,
  type FloatingIpCollection,
  type PortAddresses,
  type RouterInterfaceTarget,
} from './neutron-client.js';
export type * from './neutron-types.js';
export type { OctaviaClient, LoadBalancerCollection, MemberCollection } from './octavia-client.js';
export type * from './octavia-types.js';
export type {
  LoadBalancerChanges,
  KnownState,
  ProvisioningPhase,
  WaitOptions,
  WaiterDeps,
} from './load-balancer-waiter.js';
export type { ApiAnswer, CallObserver, CallRecord, HttpMethod } from './call-api.js';
export {
  isNotSent,
  isOpenStackImmutable,
  isOpenStackOverQuota,
  isOpenStackProvisioningFailed,
  isOpenStackUnavailable,
  openStackFaultType,
} from '../errors/classify.js';
