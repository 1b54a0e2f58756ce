/** The OpenStack client: Keystone auth, Neutron, Octavia. Re-exports only. */
export { OpenStackClient, createOpenStackClient, type OpenStackClientOptions } from './openstack-client.js';
export {
  openStackConfigSchema,
  parseOpenStackConfig,
  type OpenStackConfig,
  type OpenStackConfigInput,
  type OpenStackAuthConfig,
  type RetryConfig,
} from './openstack-config.js';
export {
  OpenStackError,
  OpenStackProvisioningError,
  parseFault,
  describeResource,
  type OpenStackErrorOptions,
  type OpenStackFault,
  type OpenStackService,
  type ResourceRef,
} from '../errors/openstack-error.js';
export {
  KeystoneSession,
  NoAuthSession,
  type AuthSession,
  type SessionInfo,
  type ServiceType,
} from './auth-session.js';
export {
  selectEndpoint,
  normaliseEndpoint,
  type CatalogService,
  type CatalogEndpoint,
} from './service-catalog.js';
export { UndiciExchange, type HttpExchange, type WireRequest, type WireAnswer } from './http-exchange.js';
export {
  OpenStackTransport,
  toQueryString,
  type ServiceCall,
  type ServiceTransport,
  type QueryParams,
} from './openstack-transport.js';
export { shouldRetry, retryDelay, type RetryPolicy } from './retry-policy.js';
export {
  RestCollection,
  type CollectionSpec,
  type CallOptions,
  type ListOptions,
  type Filters,
  type DeleteOutcome,
  type Identified,
} from './rest-collection.js';
export {
  NeutronClient,
  RouterCollection,
  FloatingIpCollection,
  portAddresses,
  type PortAddresses,
  type RouterInterfaceTarget,
} from './neutron-client.js';
export type * from './neutron-types.js';
export { OctaviaClient, LoadBalancerCollection, MemberCollection } from './octavia-client.js';
export type * from './octavia-types.js';
export {
  waitForActive,
  whenActive,
  LoadBalancerChanges,
  provisioningPhase,
  type KnownState,
  type ProvisioningPhase,
  type WaitOptions,
  type WaiterDeps,
} from './load-balancer-waiter.js';
export type { CallObserver, CallRecord } from './call-api.js';
export {
  isNotSent,
  isOpenStackImmutable,
  isOpenStackOverQuota,
  isOpenStackProvisioningFailed,
  isOpenStackUnavailable,
  openStackFaultType,
} from '../errors/classify.js';
