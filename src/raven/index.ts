/**
 * `kube-raven/daemon`: the daemon's pieces for code that uses them directly: its configuration
 * loader, the change event sinks receive, each sink, the per-sink delivery queue, and the webhook
 * signature a receiver checks. Re-exports only; the names are reviewed like the root's
 * (`test/unit/public-api.test.ts`).
 */
export {
  loadRavenConfig,
  parseRavenConfig,
  type LoadRavenConfigOptions,
  type ParseRavenConfigOptions,
} from './config/load-raven-config.js';
export { defaultRavenConfig } from './config/default-raven-config.js';
export type { RavenConfig } from './config/raven-config-schema.js';
export { ConfigAggregateError, configErrorList } from '../errors/config-aggregate-error.js';
export type {
  ChangedBy,
  ChangeEvent,
  ChangeOrigin,
  ChangeType,
  DiffEntry,
  ResourceId,
} from './model/change-event.js';
export type { GapNotice, SinkRecord } from './model/gap-notice.js';
export type { Sink } from './sinks/sink.js';
export { StdoutSink, type StdoutSinkOptions } from './sinks/stdout-sink.js';
export { FileSink, type FileSinkOptions } from './sinks/file-sink.js';
export { WebhookSink, type WebhookSinkOptions } from './sinks/webhook-sink.js';
export { signWebhook, verifyWebhook } from './sinks/webhook-signature.js';
export { ChatSink, type ChatSinkOptions } from './sinks/chat-sink.js';
export { CloudEventsSink, type CloudEventsSinkOptions } from './sinks/cloudevents-sink.js';
export { PostgresSink, type PostgresSinkOptions } from './sinks/postgres-sink.js';
export { NatsSink, type NatsSinkOptions } from './sinks/nats-sink.js';
export { RedisSink, type RedisSinkOptions } from './sinks/redis-sink.js';
export { LokiSink, type LokiSinkOptions } from './sinks/loki-sink.js';
export { SyslogSink, type SyslogSinkOptions } from './sinks/syslog-sink.js';
export {
  SinkDelivery,
  type CloseResult,
  type SinkDeliveryOptions,
  type Verdict,
} from './delivery/sink-delivery.js';
