/** The daemon's configuration: schema, types, loader and the built-in default. */
export {
  loadRavenConfig,
  parseRavenConfig,
  type LoadRavenConfigOptions,
  type ParseRavenConfigOptions,
} from './load-raven-config.js';
export { defaultRavenConfig, DEFAULT_EXCLUDED_NAMESPACES } from './default-raven-config.js';
export { ConfigAggregateError, configErrorList } from '../../errors/config-aggregate-error.js';
export {
  ravenConfigSchema,
  LOG_LEVELS,
  type RavenConfig,
  type LogLevel,
  type ServerConfig,
  type CheckpointConfig,
  type LeaderElectionConfig,
  type DiffConfig,
  type ShutdownConfig,
  type RouteConfig,
  type HandlerConfig,
} from './raven-config-schema.js';
export {
  CHANGE_TYPES,
  WATCHER_TYPES,
  type WatcherConfig,
  type ResourceWatcherConfig,
  type EventsWatcherConfig,
  type PredicatesConfig,
} from './watcher-schema.js';
export type { RuleConfig } from './route-schema.js';
export {
  SINK_TYPES,
  type SinkType,
  type SinkConfig,
  type SinkConfigOf,
  type DeliveryConfig,
} from './sink-schema.js';
export { TEMPLATE_FIELDS } from '../model/template-check.js';
export { resolveConfigPath } from './finalize-config.js';
export { expandString, type Environment } from './env-substitution.js';
