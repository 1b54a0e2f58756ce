/**
 * The `sinks:` entries: where change events are delivered. Every sink has a `name`, a `type` that
 * selects its settings, and `delivery` (retries, backoff, dead letters, backlog), which the
 * delivery layer applies to every sink alike.
 */
import * as z from 'zod';
import {
  expecting,
  headersSchema,
  integer,
  nameSchema,
  oneOrMany,
  seconds,
  serverUri,
  strictObject,
  text,
  urlSchema,
} from './schema-helpers.js';
import { subjectTemplateProblem, templateProblem } from '../model/template-check.js';
import { SYSLOG_FACILITIES } from '../sinks/syslog-sink.js';
import { EMAIL_SUBJECT } from '../sinks/email-message.js';
import { LOKI_LABELS } from '../sinks/loki-sink.js';

/** Sink types, in the order documented. */
export const SINK_TYPES = [
  'stdout',
  'file',
  'webhook',
  'slack',
  'mattermost',
  'teams',
  'discord',
  'cloudevents',
  'postgres',
  'nats',
  'redis',
  'loki',
  'syslog',
  'email',
] as const;

export type SinkType = (typeof SINK_TYPES)[number];

/**
 * Retries and buffering, per sink. `concurrency` defaults higher for the streaming sinks: their
 * deliveries in flight together are what they batch into one write.
 */
function deliverySchemaWith(defaultConcurrency: number) {
  return strictObject({
    /** Attempts per event, the first included; then the event goes to the dead-letter file (or is dropped). */
    maxAttempts: integer(1, 8),
    /** First retry delay; doubles per attempt (with jitter) up to `maxBackoffMs`. */
    initialBackoffMs: integer(1, 500, ' milliseconds'),
    maxBackoffMs: integer(1, 60_000, ' milliseconds'),
    /** JSON lines of events that exhausted their attempts; relative to the config file. */
    deadLetterPath: text('a file path').optional(),
    /** Events waiting for this sink before it is considered too far behind and resynced from the checkpoint. */
    maxBacklog: integer(1, 10_000, ' events'),
    /** Objects delivered at the same time (events of one object are always in order). */
    concurrency: integer(1, defaultConcurrency),
    /** Longest wait a receiver may ask for with Retry-After. */
    maxRetryAfterMs: integer(0, 900_000, ' milliseconds'),
  }).superRefine((delivery, ctx) => {
    if (delivery.initialBackoffMs > delivery.maxBackoffMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['initialBackoffMs'],
        message: `initialBackoffMs (${delivery.initialBackoffMs}) must not exceed maxBackoffMs (${delivery.maxBackoffMs})`,
      });
    }
  });
}

export const deliverySchema = deliverySchemaWith(4);

/**
 * Streaming sinks batch the deliveries in flight together, so they default to many: one object's
 * events are still one at a time. 256 lets a batch carry a few hundred changes (the figures in
 * docs/benchmarks.md) while a retrying sink holds at most that many in flight.
 */
const STREAMING_CONCURRENCY = 256;

const common = {
  name: nameSchema,
  delivery: deliverySchema.prefault({}),
  /**
   * Also deliver a `gap` notice whenever intermediate changes may never reach this sink (an
   * expired resume point, a relist, an overflow): an audit trail then knows where it has a hole.
   */
  gapNotices: z.boolean().default(false),
};

const template = expecting(z.string(), 'a message template such as "{{type}} {{resource.kind}} {{name}}"')
  .superRefine((value, ctx) => {
    const problem = templateProblem(value);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  })
  .optional();

const timeoutSeconds = seconds(10);

/** A number of seconds, 0 included (0 turns the setting off). */
function secondsOrZero(defaultValue: number) {
  return expecting(z.number().min(0), 'a number of seconds, 0 or more').default(defaultValue);
}

/**
 * Chat sinks batch the deliveries in flight together (`chat-batch.ts`), so a batch can only be as
 * big as the deliveries allowed at once: 32 lets a burst of changes to many objects go out in a
 * post or two while one object's events stay in order.
 */
const CHAT_CONCURRENCY = 32;

const chat = {
  ...common,
  delivery: deliverySchemaWith(CHAT_CONCURRENCY).prefault({}),
  /** Changes arriving within `windowSeconds` of the first go out as one post of at most `maxItems`. */
  batch: strictObject({
    windowSeconds: secondsOrZero(2),
    maxItems: integer(1, 20, ' messages'),
  }).prefault({}),
  /** Least time between two posts of the sink, and between two posts about one object. */
  throttle: strictObject({
    perSinkSeconds: secondsOrZero(1),
    perObjectSeconds: secondsOrZero(0),
  }).prefault({}),
  /** `group`: status-only changes become one digest line per object with the next post; `post`: each its own message. */
  statusOnly: z.enum(['group', 'post']).default('group'),
  /** Count a message identical to the object's previous one instead of posting it again. */
  dedupe: z.boolean().default(true),
  /** The incoming-webhook URL (a credential: use `${VAR}`). */
  url: urlSchema,
  /** Replaces the message text; default: the sink's built-in summary with the diff. */
  template,
  /** Diff lines shown before "... and N more". */
  maxDiffLines: integer(1, 20, ' lines'),
  timeoutSeconds,
};

/** Mattermost and Discord also let the poster's name and avatar be set. */
const poster = {
  username: text('a display name').optional(),
  iconUrl: urlSchema.optional(),
};

/** Settings every streaming sink (postgres, nats, redis) shares. */
const streaming = {
  ...common,
  delivery: deliverySchemaWith(STREAMING_CONCURRENCY).prefault({}),
  /** Most changes per write (one statement, one publish burst, one pipeline). */
  maxBatch: integer(1, 500, ' changes'),
  /** For connecting and for each write. */
  timeoutSeconds,
};

/** A PostgreSQL identifier Raven creates (kept in step with postgres-statements.ts). */
export const pgIdentifier = expecting(
  z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/),
  'a table or schema name of 1 to 63 characters a-z, 0-9 and _, not starting with a digit',
);

const natsSubjectTemplate = expecting(
  z.string(),
  'a subject template such as "raven.prod.{{resource.kind}}.{{namespace}}"',
).superRefine((value, ctx) => {
  const problem = subjectTemplateProblem(value);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

/** `raven@example.com` or `Raven <raven@example.com>`. */
const emailAddress = expecting(
  z
    .string()
    .trim()
    .regex(/^(?:[^<>@]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/),
  'an e-mail address like raven@example.com or "Raven <raven@example.com>"',
);

/** One sink. */
export const sinkSchema = z.discriminatedUnion('type', [
  strictObject({
    ...common,
    type: z.literal('stdout'),
    /** `auto`: human-readable text on a terminal, JSON lines otherwise. */
    format: z.enum(['auto', 'text', 'json']).default('auto'),
    /** Force colour on or off; omitted: on a terminal unless NO_COLOR is set. */
    color: z.boolean().optional(),
  }),
  strictObject({
    ...common,
    // The lines delivered together share one write and one fsync (`file-sink.ts`, group commit):
    // as many in flight as a streaming sink's batch, or every fsync would cover at most 4 lines.
    delivery: deliverySchemaWith(STREAMING_CONCURRENCY).prefault({}),
    type: z.literal('file'),
    /** JSON lines, appended; relative to the config file. */
    path: text('a file path'),
    /** Rotate before a write would pass `maxBytes`, keeping `maxFiles` old files (0: truncate instead). */
    rotate: strictObject({
      maxBytes: integer(1024, 100 * 1024 * 1024, ' bytes'),
      maxFiles: integer(0, 5),
    }).prefault({}),
    /** `always`: on disk before the event counts as delivered; `rotate`: only at rotation and close. */
    fsync: z.enum(['always', 'rotate']).default('always'),
  }),
  strictObject({
    ...common,
    type: z.literal('webhook'),
    url: urlSchema,
    /** Signs each body with HMAC-SHA256; the receiver verifies the signature header. */
    secret: text('a secret string (use ${VAR})').optional(),
    headers: headersSchema,
    timeoutSeconds,
  }),
  strictObject({ ...chat, type: z.literal('slack') }),
  strictObject({ ...chat, ...poster, type: z.literal('mattermost') }),
  strictObject({ ...chat, type: z.literal('teams') }),
  strictObject({ ...chat, ...poster, type: z.literal('discord') }),
  strictObject({
    ...common,
    type: z.literal('cloudevents'),
    url: urlSchema,
    /** The CloudEvents `source` attribute (a URI reference naming this Raven). */
    source: text('a URI reference such as /raven/cluster-a').default('/raven'),
    /** Start of the CloudEvents `type`: `<prefix>.<resource>[.<group>].<change type>`. */
    typePrefix: text('a reverse-DNS prefix such as io.k8s.raven').default('io.k8s.raven'),
    headers: headersSchema,
    timeoutSeconds,
  }),
  strictObject({
    ...streaming,
    type: z.literal('postgres'),
    /** `postgres://user:password@host:5432/db` (a credential: use `${VAR}`). */
    connectionString: serverUri(['postgres', 'postgresql'], 'postgres://user:password@host:5432/database'),
    schema: pgIdentifier.default('public'),
    /** The append-only log of changes. */
    table: pgIdentifier.default('raven_changes'),
    /** Also keep each object's current state here, upserted by uid; none when omitted. */
    currentStateTable: pgIdentifier.optional(),
    /** Connections, and batches written at the same time. */
    poolSize: integer(1, 4, ' connections'),
  }).superRefine((sink, ctx) => {
    if (sink.currentStateTable !== undefined && sink.currentStateTable === sink.table)
      ctx.addIssue({
        code: 'custom',
        path: ['currentStateTable'],
        message: `currentStateTable must differ from table ("${sink.table}")`,
      });
  }),
  strictObject({
    ...streaming,
    type: z.literal('nats'),
    /** One server URL or several: `nats://user:password@host:4222` (a credential: use `${VAR}`). */
    servers: oneOrMany(
      serverUri(['nats', 'tls'], 'nats://host:4222'),
      'a server URL like nats://host:4222, or a list of them',
    ),
    /** The subject of each change, `{{placeholders}}` as in chat templates, each value one token. */
    subject: natsSubjectTemplate.default('raven.{{resource.kind}}.{{namespace}}'),
    /** The JetStream stream the subjects belong to. */
    stream: expecting(
      z.string().regex(/^[A-Za-z0-9_-]{1,255}$/),
      'a stream name of letters, digits, _ and -',
    ).default('RAVEN'),
    /** Create the stream when missing (capturing the subject template's prefix); an existing one is used as it is. */
    createStream: z.boolean().default(true),
    /** The created stream's duplicate window: a change published again within it is stored once. */
    duplicateWindowSeconds: seconds(600),
  }),
  strictObject({
    ...streaming,
    type: z.literal('redis'),
    /** `redis://user:password@host:6379/0`, `rediss://` for TLS (a credential: use `${VAR}`). */
    url: serverUri(['redis', 'rediss'], 'redis://user:password@host:6379/0'),
    /** The stream's key. */
    stream: text('a key such as raven:changes').default('raven:changes'),
    /** `XADD ... MAXLEN ~ maxLen`: the stream keeps about this many entries. */
    maxLen: integer(1, 100_000, ' entries'),
    /** How long an object's de-duplication key lives after its last change. */
    dedupeTtlSeconds: integer(1, 7 * 86_400, ' seconds'),
  }),
  strictObject({
    ...streaming,
    type: z.literal('loki'),
    /** Loki's base URL, `http://loki:3100` (or a gateway's, with a path prefix); `/loki/api/v1/push` is added. */
    url: urlSchema,
    /** Sent as `X-Scope-OrgID`, for a multi-tenant Loki. */
    tenant: text('a tenant id such as team-a').optional(),
    /** Basic authentication user name; with `password`. */
    username: text('a user name').optional(),
    /** Basic authentication password (a credential: use `${VAR}`). */
    password: text('a password (use ${VAR})').optional(),
    /** `Authorization: Bearer <token>` (a credential: use `${VAR}`); not with username. */
    bearerToken: text('a token (use ${VAR})').optional(),
    headers: headersSchema,
    /** Labels added to every stream, e.g. `{ cluster: prod }`. */
    labels: z.record(z.string(), text('a label value')).default({}),
    /** Label each stream with the change's namespace. */
    namespaceLabel: z.boolean().default(true),
    /** For https: a PEM file of CA certificates to trust instead of the system's; relative to the config file. */
    caFile: text('a PEM file path').optional(),
    /** For https: the name the server certificate must carry; default the URL's host. */
    serverName: text('a host name').optional(),
  }).superRefine((sink, ctx) => {
    if ((sink.username === undefined) !== (sink.password === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [sink.username === undefined ? 'username' : 'password'],
        message: 'username and password go together: give both to authenticate, or neither',
      });
    if (sink.username !== undefined && sink.bearerToken !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['bearerToken'],
        message: 'give username and password, or bearerToken, not both',
      });
    for (const name of Object.keys(sink.labels))
      if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name) || name.startsWith('__'))
        ctx.addIssue({
          code: 'custom',
          path: ['labels', name],
          message: `label name "${name}" is not valid: use letters, digits and _, not starting with a digit or __`,
        });
      else if ((LOKI_LABELS as readonly string[]).includes(name))
        ctx.addIssue({
          code: 'custom',
          path: ['labels', name],
          message: `label "${name}" is set by Raven on every stream; choose another name`,
        });
  }),
  strictObject({
    ...common,
    type: z.literal('syslog'),
    /** The server's host name or IP address. */
    host: text('a host name or IP address such as syslog.example.com or 127.0.0.1'),
    port: expecting(z.int().min(1).max(65_535), 'a port from 1 to 65535').optional(),
    /** `tcp` and `tls`: RFC 5424 with octet-counting framing; `udp`: one datagram per message. */
    transport: z.enum(['tcp', 'tls', 'udp']).default('tcp'),
    /** For `tls`: a PEM file of CA certificates to trust instead of the system's; relative to the config file. */
    caFile: text('a PEM file path').optional(),
    /** For `tls`: the name the server certificate must carry; default `host`. */
    serverName: text('a host name').optional(),
    facility: z.enum(SYSLOG_FACILITIES).default('local0'),
    appName: expecting(
      z.string().regex(/^[!-~]{1,48}$/),
      'an APP-NAME of 1 to 48 printable ASCII characters, no spaces',
    ).default('raven'),
    timeoutSeconds,
  }).superRefine((sink, ctx) => {
    if (sink.transport !== 'tls')
      for (const key of ['caFile', 'serverName'] as const)
        if (sink[key] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: `${key} applies only to transport: tls (transport is ${sink.transport})`,
          });
  }),
  strictObject({
    ...common,
    type: z.literal('email'),
    /** The SMTP server's host name or IP address. */
    host: text('a host name or IP address such as smtp.example.com or 127.0.0.1'),
    /** Default 587 for starttls, 465 for tls, 25 for none. */
    port: expecting(z.int().min(1).max(65_535), 'a port from 1 to 65535').optional(),
    /** `starttls`: upgrade before sending, refuse a server without STARTTLS; `tls`: TLS from the first byte; `none`: clear text. */
    security: z.enum(['starttls', 'tls', 'none']).default('starttls'),
    /** For starttls and tls: a PEM file of CA certificates to trust instead of the system's; relative to the config file. */
    caFile: text('a PEM file path').optional(),
    /** For starttls and tls: the name the server certificate must carry; default `host`. */
    serverName: text('a host name').optional(),
    /** SMTP AUTH user name; with `password`. */
    username: text('a user name').optional(),
    /** SMTP AUTH password (a credential: use `${VAR}`). */
    password: text('a password (use ${VAR})').optional(),
    from: emailAddress,
    to: oneOrMany(emailAddress, 'an address like oncall@example.com, or a list of them'),
    /** The subject, `{{placeholders}}` of the first change; `(+N more)` is added for a digest. */
    subject: expecting(z.string(), 'a subject template such as "[raven] {{type}} {{resource.kind}} {{key}}"')
      .superRefine((value, ctx) => {
        const problem = templateProblem(value);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      })
      .default(EMAIL_SUBJECT),
    /** Most changes in one mail: the changes delivered together go in one digest. */
    maxBatch: integer(1, 50, ' changes'),
    /** Diff lines shown per change before "… and N more". */
    maxDiffLines: integer(1, 50, ' lines'),
    /** Changes delivered at the same time, so also the most a digest can gather. */
    delivery: deliverySchemaWith(50).prefault({}),
    timeoutSeconds,
  }).superRefine((sink, ctx) => {
    if (sink.security === 'none')
      for (const key of ['caFile', 'serverName'] as const)
        if (sink[key] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: `${key} applies only to security: starttls or tls (security is none)`,
          });
    if ((sink.username === undefined) !== (sink.password === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [sink.username === undefined ? 'username' : 'password'],
        message: 'username and password go together: give both to authenticate, or neither',
      });
    if (sink.username !== undefined && sink.security === 'none')
      ctx.addIssue({
        code: 'custom',
        path: ['security'],
        message:
          'a password is never sent in clear text: use security: starttls or tls with username and password',
      });
  }),
]);

export type SinkConfig = z.output<typeof sinkSchema>;
export type DeliveryConfig = z.output<typeof deliverySchema>;
/** The settings of one sink type: `SinkConfigOf<'webhook'>`. */
export type SinkConfigOf<T extends SinkType> = Extract<SinkConfig, { type: T }>;
