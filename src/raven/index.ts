/**
 * `kube-raven/daemon`: the daemon's pieces for code that uses them directly: its configuration
 * loader, the change event and gap notice sinks receive, and the per-sink delivery queue with
 * its retries and dead letters. The sinks themselves are under `kube-raven/sinks`. Re-exports
 * only; the names and signatures are pinned by `api/kube-raven-daemon.api.md`.
 */
export {
  loadRavenConfig,
  parseRavenConfig,
  type LoadRavenConfigOptions,
  type ParseRavenConfigOptions,
} from './config/load-raven-config.js';
export { defaultRavenConfig } from './config/default-raven-config.js';
export type {
  LeaderElectionConfig,
  ParsedRavenConfig,
  RavenConfig,
  RouteConfig,
  ShardingConfig,
} from './config/raven-config-schema.js';
export type { ravenConfigSchema } from './config/raven-config-schema.js';
export type { RuleConfig, ruleSchema } from './config/route-schema.js';
export type { Environment } from './config/env-substitution.js';
export { ConfigAggregateError, configErrorList } from '../errors/config-aggregate-error.js';
export type {
  ChangedBy,
  ChangeEvent,
  ChangeOrigin,
  ChangeType,
  DiffEntry,
  ResourceId,
} from './model/change-event.js';
export type { EventOccurrence, InvolvedObject } from './model/event-occurrence.js';
export type { GapNotice, GapReason, SinkRecord } from './model/gap-notice.js';
export {
  SinkDelivery,
  type CloseResult,
  type DeliveryState,
  type OverflowedObject,
  type RoutedRecord,
  type Routing,
  type Settlement,
  type SinkDeliveryOptions,
  type Verdict,
} from './delivery/sink-delivery.js';
export type { DeliveryMetrics } from './metrics/delivery-metrics.js';
export type { DeadLetterRecord, DeadLetterWriter } from './delivery/dead-letter.js';
