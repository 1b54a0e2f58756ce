/**
 * Build a sink from its config entry: the one place where config settings (seconds, nested
 * `rotate`) become sink options (milliseconds, flat).
 */
import { readFileSync } from 'node:fs';
import type { SinkConfig } from '../config/sink-schema.js';
import type { Clock } from '../../util/clock.js';
import { ChatSink } from '../sinks/chat-sink.js';
import { CloudEventsSink } from '../sinks/cloudevents-sink.js';
import { FileSink } from '../sinks/file-sink.js';
import { NatsSink } from '../sinks/nats-sink.js';
import { PostgresSink } from '../sinks/postgres-sink.js';
import { RedisSink } from '../sinks/redis-sink.js';
import { LokiSink } from '../sinks/loki-sink.js';
import type { Sink } from '../sinks/sink.js';
import { StdoutSink } from '../sinks/stdout-sink.js';
import { WebhookSink } from '../sinks/webhook-sink.js';
import { SyslogSink } from '../sinks/syslog-sink.js';
import { EmailSink } from '../sinks/email-sink.js';

export interface BuildSinkOptions {
  clock?: Clock;
  /** Where stdout sinks write (tests). */
  stdout?: NodeJS.WritableStream & { isTTY?: boolean };
}

export function buildSink(config: SinkConfig, options: BuildSinkOptions = {}): Sink {
  const clock = options.clock === undefined ? {} : { clock: options.clock };
  switch (config.type) {
    case 'stdout':
      return new StdoutSink({
        name: config.name,
        format: config.format,
        ...(config.color === undefined ? {} : { color: config.color }),
        ...(options.stdout === undefined ? {} : { stream: options.stdout as never }),
      });
    case 'file':
      return new FileSink({
        name: config.name,
        path: config.path,
        maxBytes: config.rotate.maxBytes,
        maxFiles: config.rotate.maxFiles,
        fsync: config.fsync,
      });
    case 'webhook':
      return new WebhookSink({
        name: config.name,
        url: config.url,
        ...(config.secret === undefined ? {} : { secret: config.secret }),
        headers: config.headers,
        timeoutMs: config.timeoutSeconds * 1000,
        ...clock,
      });
    case 'slack':
    case 'teams':
    case 'mattermost':
    case 'discord': {
      // Only Mattermost and Discord let a webhook choose the poster's name and icon.
      const poster: { username?: string | undefined; iconUrl?: string | undefined } =
        config.type === 'mattermost' || config.type === 'discord' ? config : {};
      return new ChatSink({
        name: config.name,
        platform: config.type,
        url: config.url,
        ...(config.template === undefined ? {} : { template: config.template }),
        maxDiffLines: config.maxDiffLines,
        ...(poster.username === undefined ? {} : { username: poster.username }),
        ...(poster.iconUrl === undefined ? {} : { iconUrl: poster.iconUrl }),
        timeoutMs: config.timeoutSeconds * 1000,
        quiet: {
          batchWindowMs: config.batch.windowSeconds * 1000,
          batchMaxItems: config.batch.maxItems,
          perSinkMs: config.throttle.perSinkSeconds * 1000,
          perObjectMs: config.throttle.perObjectSeconds * 1000,
        },
        statusOnly: config.statusOnly,
        dedupe: config.dedupe,
        ...clock,
      });
    }
    case 'cloudevents':
      return new CloudEventsSink({
        name: config.name,
        url: config.url,
        source: config.source,
        typePrefix: config.typePrefix,
        headers: config.headers,
        timeoutMs: config.timeoutSeconds * 1000,
        ...clock,
      });
    case 'postgres':
      return new PostgresSink({
        name: config.name,
        connectionString: config.connectionString,
        schema: config.schema,
        table: config.table,
        ...(config.currentStateTable === undefined ? {} : { currentStateTable: config.currentStateTable }),
        poolSize: config.poolSize,
        maxBatch: config.maxBatch,
        timeoutMs: config.timeoutSeconds * 1000,
      });
    case 'nats':
      return new NatsSink({
        name: config.name,
        servers: config.servers,
        subject: config.subject,
        stream: config.stream,
        createStream: config.createStream,
        duplicateWindowMs: config.duplicateWindowSeconds * 1000,
        maxBatch: config.maxBatch,
        timeoutMs: config.timeoutSeconds * 1000,
      });
    case 'redis':
      return new RedisSink({
        name: config.name,
        url: config.url,
        stream: config.stream,
        maxLen: config.maxLen,
        dedupeTtlSeconds: config.dedupeTtlSeconds,
        maxBatch: config.maxBatch,
        timeoutMs: config.timeoutSeconds * 1000,
      });
    case 'loki':
      return new LokiSink({
        name: config.name,
        url: config.url,
        ...(config.tenant === undefined ? {} : { tenant: config.tenant }),
        ...(config.username === undefined
          ? {}
          : {
              username: config.username,
              ...(config.password === undefined ? {} : { password: config.password }),
            }),
        ...(config.bearerToken === undefined ? {} : { bearerToken: config.bearerToken }),
        headers: config.headers,
        labels: config.labels,
        namespaceLabel: config.namespaceLabel,
        maxBatch: config.maxBatch,
        timeoutMs: config.timeoutSeconds * 1000,
        ...(config.caFile === undefined && config.serverName === undefined
          ? {}
          : {
              tls: {
                ...(config.caFile === undefined ? {} : { ca: readFileSync(config.caFile, 'utf8') }),
                ...(config.serverName === undefined ? {} : { serverName: config.serverName }),
              },
            }),
        ...clock,
      });
    case 'syslog':
      return new SyslogSink({
        name: config.name,
        host: config.host,
        // The IANA ports: 514 for plain syslog over TCP and UDP, 6514 for syslog over TLS.
        port: config.port ?? (config.transport === 'tls' ? 6514 : 514),
        transport: config.transport,
        ...(config.caFile === undefined ? {} : { ca: readFileSync(config.caFile, 'utf8') }),
        ...(config.serverName === undefined ? {} : { serverName: config.serverName }),
        facility: config.facility,
        appName: config.appName,
        timeoutMs: config.timeoutSeconds * 1000,
      });
    case 'email':
      return new EmailSink({
        name: config.name,
        host: config.host,
        ...(config.port === undefined ? {} : { port: config.port }),
        security: config.security,
        ...(config.caFile === undefined ? {} : { ca: readFileSync(config.caFile, 'utf8') }),
        ...(config.serverName === undefined ? {} : { serverName: config.serverName }),
        ...(config.username === undefined ? {} : { username: config.username, password: config.password }),
        from: config.from,
        to: config.to,
        subject: config.subject,
        maxBatch: config.maxBatch,
        maxDiffLines: config.maxDiffLines,
        timeoutMs: config.timeoutSeconds * 1000,
      });
  }
}
