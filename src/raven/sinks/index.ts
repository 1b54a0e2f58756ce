/**
 * `kube-raven/sinks`: where change events go, for code that sends events without the daemon
 * (each sink takes `SinkRecord`s from `kube-raven/daemon`), and the webhook signature a receiver
 * checks. Re-exports only; the names and signatures are pinned by `api/kube-raven-sinks.api.md`.
 */
export type { Sink } from './sink.js';
export { StdoutSink, type StdoutSinkOptions } from './stdout-sink.js';
export { FileSink, type FileSinkOptions } from './file-sink.js';
export { WebhookSink, type WebhookSinkOptions } from './webhook-sink.js';
export { signWebhook, verifyWebhook } from './webhook-signature.js';
export { ChatSink, type ChatSinkOptions } from './chat-sink.js';
export type { ChatBatchOptions } from './chat-batch.js';
export type { ChatMessageOptions, ChatPlatform } from './chat-messages.js';
export { CloudEventsSink, type CloudEventsSinkOptions, type RavenCloudEvent } from './cloudevents-sink.js';
export { PostgresSink, type PostgresSinkOptions } from './postgres-sink.js';
export { NatsSink, type NatsSinkOptions } from './nats-sink.js';
export { RedisSink, type RedisSinkOptions } from './redis-sink.js';
export { LokiSink, type LokiSinkOptions } from './loki-sink.js';
export type { PoolTls } from '../../http/http-pool.js';
export { SyslogSink, SYSLOG_FACILITIES, type SyslogFacility, type SyslogSinkOptions } from './syslog-sink.js';
export { EmailSink, type EmailSecurity, type EmailSinkOptions } from './email-sink.js';
