/**
 * Sinks: where change events go. Re-exports only.
 */
export type { Sink } from './sink.js';
export { SinkHttpError, sinkRetryAfterMs } from './sink-http-error.js';
export { StdoutSink, formatEventText, type StdoutSinkOptions } from './stdout-sink.js';
export { FileSink, type FileSinkOptions } from './file-sink.js';
export { WebhookSink, type WebhookSinkOptions } from './webhook-sink.js';
export { signWebhook, verifyWebhook } from './webhook-signature.js';
export { ChatSink, discordRetryAfterMs, type ChatSinkOptions } from './chat-sink.js';
export {
  chatMessage,
  slackMessage,
  mattermostMessage,
  teamsMessage,
  discordMessage,
  type ChatMessageOptions,
  type ChatPlatform,
} from './chat-messages.js';
export {
  CloudEventsSink,
  cloudEventType,
  toCloudEvent,
  type CloudEventsSinkOptions,
  type RavenCloudEvent,
} from './cloudevents-sink.js';
export { PostgresSink, type PostgresSinkOptions } from './postgres-sink.js';
export { NatsSink, type NatsSinkOptions } from './nats-sink.js';
export { natsSubject, subjectToken } from './nats-subject.js';
export { RedisSink, type RedisSinkOptions } from './redis-sink.js';
export { LokiSink, lokiLabels, lokiTimestamp, LOKI_LABELS, type LokiSinkOptions } from './loki-sink.js';
export { BatchWriter, type BatchWrite, type BatchWriterOptions } from './batch-writer.js';
export { SinkPool } from './http-post.js';
export { scrubUrl } from './scrub-url.js';
export {
  SyslogSink,
  syslogMessage,
  SYSLOG_FACILITIES,
  type SyslogFacility,
  type SyslogSinkOptions,
} from './syslog-sink.js';
export { EmailSink, EMAIL_PORTS, type EmailSecurity, type EmailSinkOptions } from './email-sink.js';
export { emailMessage, EMAIL_SUBJECT, type EmailMessage, type EmailMessageOptions } from './email-message.js';
