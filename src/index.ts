/**
 * kube-raven: the table of contents of what a newcomer needs: the client, watch, the cache,
 * informers, the work queue, controllers and leases, errors, the clock and the logger. Every
 * public name is listed here by name (no `export *`), so a new export is a decision:
 * `test/unit/public-api.test.ts` compares every entry point's declarations with its report under
 * `api/` (`npm run api:update` rewrites them). Internals (wire decoders, kubeconfig parsing steps,
 * the sinks' own error predicates) stay unexported. The rest is under subpaths named for what
 * they are: `kube-raven/auth`, `kube-raven/shard`, `kube-raven/daemon`, `kube-raven/sinks`,
 * `kube-raven/openstack`, `kube-raven/testing`, `kube-raven/client-node` (docs/api.md).
 */
export { Backoff, type BackoffOptions, type Jitter } from './util/backoff.js';
export { type Clock, sleep, systemClock, type TimerHandle, type TimerOptions } from './util/clock.js';
export { type Logger, silentLogger } from './util/logger.js';
export { ApiError, type RequestInfo } from './errors/api-error.js';
export {
  errorKind,
  isAlreadyExists,
  isAuthSetupError,
  isCertificateError,
  isConflict,
  isExpired,
  isForbidden,
  isInvalid,
  isNotFound,
  isRetryable,
  isTooManyRequests,
  isUnauthorized,
  retryAfterSeconds,
  type WatchFailure,
} from './errors/classify.js';
export { isRavenErrorCode, RAVEN_ERROR_CODES, type RavenErrorCode } from './errors/error-codes.js';
export { isRavenError, type RavenErrorByCode, type RavenErrorWithCode } from './errors/is-raven-error.js';
export {
  AuthError,
  ConfigError,
  DecodeError,
  RavenError,
  type RavenErrorOptions,
  SinkError,
  TransportError,
} from './errors/raven-error.js';
export {
  type ApiResource,
  type ApiSubresource,
  groupVersion,
  qualifiedName,
  type ResolvedResource,
} from './client/api-resource.js';
export { Discovery, type DiscoveryOptions, type DiscoveryRequester } from './client/discovery.js';
export { type InClusterOptions, loadInClusterConfig } from './client/in-cluster.js';
export {
  KubeClient,
  type KubeClientOptions,
  type RequestOptions,
  type ServerVersion,
  type StreamOptions,
  type StreamResponse,
} from './client/kube-client.js';
export type { KubeObject } from './client/kube-object.js';
export { type KubeconfigOptions, loadKubeconfig } from './client/kubeconfig.js';
export { loadConfig, type LoadConfigOptions } from './client/load-config.js';
export {
  type KeyedObject,
  makeObjectKey,
  type ObjectKey,
  objectKey,
  type ObjectKeyParts,
  parseObjectKey,
  toObjectKey,
} from './client/object-key.js';
export type { Query } from './client/request-path.js';
export {
  type ConfigSource,
  describeSource,
  type ResolvedConfig,
  type TlsConfig,
} from './client/resolved-config.js';
export {
  type DeleteObjectOptions,
  type KubeList,
  type KubeStatusLike,
  type ListOptions,
  type PatchOptions,
  type PatchType,
  type ResourceCallOptions,
  ResourceClient,
  type ResourceRequester,
  type WriteOptions,
} from './client/resource-client.js';
export type { ResourceRef } from './client/resource-path.js';
export { UnknownResourceError } from './client/unknown-resource-error.js';
export { version } from './client/version.js';
export { dropManagedFields, type ObjectWithManagedFields } from './watch/decode/drop-managed-fields.js';
export { type ChangedBy, changedBy } from './watch/changed-by.js';
export type { FieldManagerChange } from './watch/field-managers.js';
export type {
  ErrorWatchEvent,
  ObjectEventType,
  ObjectWatchEvent,
  WatchEvent,
} from './watch/decode/watch-event.js';
export type { ObjectPeek } from './watch/decode/peek.js';
export { onEvents, type WatchHandlers } from './watch/on-events.js';
export { type FieldRequirement, FieldSelector, parseFieldSelector } from './watch/scope/field-selector.js';
export {
  type LabelOperator,
  type LabelRequirement,
  type Labels,
  LabelSelector,
  labelSelectorFromObject,
} from './watch/scope/label-selector.js';
export {
  NamespaceScope,
  type NamespaceScopeSpec,
  parseNamespaceScope,
} from './watch/scope/namespace-scope.js';
export { parseLabelSelector } from './watch/scope/parse-label-selector.js';
export { SelectorError } from './watch/scope/selector-error.js';
export {
  ScopedWatcher,
  watchResource,
  type OutageReporting,
  type WatchResourceOptions,
} from './watch/watch-resource.js';
export type { OutageReport, OutageTrackerOptions } from './watch/outage-tracker.js';
export type { WatcherEvent, WatcherPhase, WatcherStatus } from './watch/watcher-events.js';
export {
  watch,
  type WatchEncoding,
  Watcher,
  type WatcherOptions,
  type WatchTransport,
  WHOLE_LIST_SINCE,
} from './watch/watcher.js';
export { type DeepReadonly, type DeepWritable, type FreezeMode, mutableCopy } from './cache/deep-freeze.js';
export { MemoryStore, type MemoryStoreOptions } from './cache/memory-store.js';
export {
  type Indexers,
  type IndexFunc,
  NAMESPACE_INDEX,
  type ReplaceResult,
  type Store,
  type StoreChange,
  type StoreReader,
  type StoreWriter,
  type SyncStatus,
} from './cache/store.js';
export type { EventHandlers, InformerEvent } from './informer/informer-events.js';
export {
  type HandlerOptions,
  type HandlerRegistration,
  Informer,
  type InformerOptions,
  type InformerSource,
  type InformerStatus,
} from './informer/informer.js';
export { reflect, type ReflectorOutput } from './informer/reflector.js';
export {
  type InformerSpec,
  SharedInformers,
  type SharedInformersOptions,
  type SharedWatcherSettings,
} from './informer/shared-informers.js';
export { bucketRateLimiter, type BucketRateLimiterOptions } from './queue/bucket-rate-limiter.js';
export { defaultControllerRateLimiter } from './queue/default-controller-rate-limiter.js';
export {
  createDelayingQueue,
  type DelayingQueue,
  type DelayingQueueOptions,
} from './queue/delaying-queue.js';
export {
  exponentialRateLimiter,
  type ExponentialRateLimiterOptions,
} from './queue/exponential-rate-limiter.js';
export { done, failed, type HandlerResult, requeueAfter } from './queue/handler-result.js';
export { maxOfRateLimiter } from './queue/max-of-rate-limiter.js';
export type { QueueMetrics, UnfinishedWork } from './queue/queue-metrics.js';
export type { RateLimiter } from './queue/rate-limiter.js';
export {
  createRateLimitingQueue,
  type RateLimitingQueue,
  type RateLimitingQueueOptions,
} from './queue/rate-limiting-queue.js';
export {
  createWorkQueue,
  type QueueItem,
  type WorkQueue,
  type WorkQueueOptions,
} from './queue/work-queue.js';
export {
  runWorkers,
  type ShutdownReport,
  WorkerRunner,
  type WorkerRunnerOptions,
  type WorkerStats,
  type WorkHandler,
  type WorkSource,
} from './queue/worker-runner.js';
export {
  Controller,
  type ControllerOptions,
  type ControllerStatus,
  ownerKeys,
  type Reconcile,
  type ReconcileContext,
  type Trigger,
  type TriggerSource,
} from './controller/controller.js';
export {
  addFinalizer,
  type FinalizerClient,
  hasFinalizer,
  removeFinalizer,
} from './controller/finalizers.js';
export {
  type LeaderElectionOptions,
  LeaderElector,
  type LeaderTerm,
  type LeaseClient,
} from './controller/leader-election.js';
export { LeaseGroup, type LeaseGroupOptions } from './controller/lease-group.js';
