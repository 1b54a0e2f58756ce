/**
 * The schema of `raven.yaml` and the types it parses to. Every field has a default except the
 * ones only the user can know (watchers, URLs, paths); docs/configuration.md documents each.
 *
 * The schema checks each field on its own. What needs the whole file (unique names, routes that
 * name existing watchers and sinks) is checked in `cross-references.ts`; relative paths and `*`
 * in routes are resolved by the loader, so the {@link RavenConfig} it returns is ready to run.
 */
import { translatorSchema } from './translator-schema.js';
import * as z from 'zod';
import { eventsSchema, watcherSchema } from './watcher-schema.js';
import { pgIdentifier, sinkSchema } from './sink-schema.js';
import { routeSchema, targets, type RouteConfig } from './route-schema.js';
import {
  expecting,
  integer,
  listenAddressSchema,
  nameSchema,
  seconds,
  serverUri,
  strictObject,
  text,
} from './schema-helpers.js';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;

/** `{ path }` is short for `{ type: sqlite, path }`. */
const checkpointSchema = z.preprocess(
  (value) =>
    typeof value === 'object' && value !== null && !Array.isArray(value) && !('type' in value)
      ? { type: 'sqlite', ...value }
      : value,
  z.discriminatedUnion('type', [
    strictObject({ type: z.literal('sqlite'), path: text('a file path such as ./raven-state.db') }),
    strictObject({ type: z.literal('memory') }),
    strictObject({
      type: z.literal('postgres'),
      /** Shared by every replica (a credential: use `${VAR}`, from a Secret). */
      url: serverUri(['postgres', 'postgresql'], 'postgres://user:password@host:5432/database'),
      /** The schema holding the checkpoint tables; one per Raven deployment. */
      schema: pgIdentifier.default('raven'),
      /**
       * Longest a confirmed delivery waits before its checkpoint is written; 0: as soon as the
       * write before it committed. Omitted: the store's default (`PG_FLUSH_INTERVAL_MS`, 100 ms).
       */
      flushIntervalMs: expecting(z.int().min(0), 'an integer of at least 0 milliseconds').optional(),
      /** For connecting and for each statement. */
      timeoutSeconds: seconds(10),
    }),
  ]),
);

/**
 * The health and metrics server's default port: not 9090 (Prometheus' own, so a daemon started
 * beside a local Prometheus would not start) nor the ports of its common companions (9091
 * Pushgateway, 9093 Alertmanager, 9100 node exporter).
 */
export const DEFAULT_SERVER_PORT = 9479;

/** The health server's own paths, which the web view's path must not take. */
const SERVER_PATHS = ['/healthz', '/livez', '/readyz', '/metrics'];

/** Shorter tokens could be guessed, and the page shows every change the daemon sees. */
const MIN_UI_TOKEN_LENGTH = 16;

const uiSchema = strictObject({
  enabled: z.boolean().default(false),
  /** Where the page is served: `/ui` serves it at `/ui/`. */
  path: expecting(
    z
      .string()
      .regex(/^(\/[A-Za-z0-9._~-]+)+$/)
      .superRefine((path, ctx) => {
        if (SERVER_PATHS.includes(path))
          ctx.addIssue({
            code: 'custom',
            message: `is the server's own ${path}; choose another, such as /ui`,
          });
      }),
    "a path such as /ui: segments of letters, digits, '.', '_', '~' or '-', no trailing '/'",
  ).default('/ui'),
  /** Required as `Authorization: Bearer <token>` (or `#token=` in the page's URL) when set. */
  token: expecting(z.string(), `a string such as \${RAVEN_UI_TOKEN}`)
    // The message never repeats the value: it is a credential.
    .superRefine((token, ctx) => {
      if (token.length < MIN_UI_TOKEN_LENGTH)
        ctx.addIssue({
          code: 'custom',
          message: `must be at least ${MIN_UI_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32); it has ${token.length}`,
        });
    })
    .optional(),
});

/** Whether `address` is reachable from this machine only. */
export function isLoopback(address: string): boolean {
  return address === 'localhost' || address === '::1' || /^127\.\d+\.\d+\.\d+$/.test(address);
}

/**
 * Why the web view cannot be served as configured, if it cannot: it needs the server, and a token
 * when the server is reachable from other machines (the page shows every change the daemon sees).
 */
export function uiServerProblem(server: {
  enabled: boolean;
  address: string;
  ui: { enabled: boolean; token?: string | undefined };
}): { path: string[]; message: string } | undefined {
  if (!server.ui.enabled) return undefined;
  if (!server.enabled)
    return { path: ['ui', 'enabled'], message: 'needs the server: server.enabled is false' };
  if (server.ui.token === undefined && !isLoopback(server.address))
    return {
      path: ['ui', 'token'],
      message: `is required when server.address (${server.address}) is reachable from other machines: set a token, or serve on 127.0.0.1`,
    };
  return undefined;
}

const serverSchema = strictObject({
  enabled: z.boolean().default(true),
  address: listenAddressSchema.default('127.0.0.1'),
  /** 0 picks any free port (the daemon logs which). */
  port: expecting(z.int().min(0).max(65_535), 'an integer from 0 to 65535').default(DEFAULT_SERVER_PORT),
  /** The web view (`raven ui`'s page) under this server, off by default. */
  ui: uiSchema.prefault({}),
}).superRefine((server, ctx) => {
  const problem = uiServerProblem(server);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', ...problem });
});

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The lease timings must leave room for renewals, as the elector requires. */
const RETRY_JITTER = 1.2;

/** Lease timings as the elector and the lease group require them: room for renewals. */
function checkLeaseTimings(
  le: { leaseDurationSeconds: number; renewDeadlineSeconds: number; retryPeriodSeconds: number },
  ctx: z.RefinementCtx,
): void {
  if (le.renewDeadlineSeconds >= le.leaseDurationSeconds) {
    ctx.addIssue({
      code: 'custom',
      path: ['renewDeadlineSeconds'],
      message: `must be less than leaseDurationSeconds (${le.leaseDurationSeconds}), got ${le.renewDeadlineSeconds}`,
    });
  } else if (le.retryPeriodSeconds * RETRY_JITTER >= le.renewDeadlineSeconds) {
    ctx.addIssue({
      code: 'custom',
      path: ['retryPeriodSeconds'],
      message: `must be well below renewDeadlineSeconds (${le.renewDeadlineSeconds}): at most ${
        Math.floor((le.renewDeadlineSeconds / RETRY_JITTER) * 100) / 100
      } with jitter, got ${le.retryPeriodSeconds}`,
    });
  }
}

/** A config's Lease timings, in seconds, as the elector and the lease group take them (ms). */
export function leaseTimingsMs(c: {
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
}): { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number } {
  return {
    leaseDurationMs: c.leaseDurationSeconds * 1000,
    renewDeadlineMs: c.renewDeadlineSeconds * 1000,
    retryPeriodMs: c.retryPeriodSeconds * 1000,
  };
}

const leaseNamespace = expecting(z.string().max(63).regex(DNS_LABEL), 'a namespace name').default('raven');

const leaderElectionSchema = strictObject({
  enabled: z.boolean().default(false),
  /** Where the Lease lives; the namespace must exist and the daemon may update Leases in it. */
  namespace: leaseNamespace,
  name: expecting(z.string().max(253).regex(DNS_SUBDOMAIN), 'a Lease name (a DNS subdomain)').default(
    'raven',
  ),
  /** Unique per replica; default `<hostname>-<pid>` (in a pod, the hostname is the pod name). */
  identity: text('a non-empty string').optional(),
  leaseDurationSeconds: seconds(15),
  renewDeadlineSeconds: seconds(10),
  retryPeriodSeconds: seconds(2),
}).superRefine(checkLeaseTimings);

/** Replicas that split every watcher's objects among them (`docs/scaling.md`). */
const shardingSchema = strictObject({
  enabled: z.boolean().default(false),
  /** Where the members' Leases live; the daemon may create, list, update and delete Leases in it. */
  namespace: leaseNamespace,
  /** The group's name: the replicas of one deployment share it. */
  group: expecting(
    z.string().max(46).regex(DNS_LABEL),
    "a DNS label of at most 46 characters (a-z, 0-9 and '-')",
  ).default('raven'),
  /** Unique per replica; default `<hostname>-<pid>` (in a pod, the hostname is the pod name). */
  identity: text('a non-empty string').optional(),
  /** What an object's shard is decided by: its uid (even spread) or its namespace (kept together). */
  field: z.enum(['uid', 'namespace']).default('uid'),
  /** How many parts the hash space is cut into; every replica of the group must use the same. */
  buckets: expecting(z.int().min(1).max(65_536), 'an integer from 1 to 65536').default(128),
  leaseDurationSeconds: seconds(15),
  renewDeadlineSeconds: seconds(10),
  retryPeriodSeconds: seconds(2),
}).superRefine(checkLeaseTimings);

const diffSchema = strictObject({
  /** Extra paths left out of diffs (and of "did it change"), added to the built-in noise list. */
  ignore: z.array(text('a field path such as status.observedGeneration')).default([]),
  /** Use only `ignore`, not the built-in list. */
  replaceDefaults: z.boolean().default(false),
  /** Longest diff reported for one event. */
  maxEntries: integer(1, 200),
});

const shutdownSchema = strictObject({
  /** How long to keep delivering queued events after SIGTERM before giving up (they stay in the checkpoint). */
  drainTimeoutSeconds: expecting(z.number().min(0), 'a number of seconds (0 or more)').default(10),
});

const handlerSchema = strictObject({
  name: nameSchema,
  /** A path (relative to the config file) or an installed package name. */
  module: text('a module path such as ./handlers/translate.mjs or a package name'),
  /** Which watchers' events the handler receives; default all. */
  watchers: targets('watcher').default(['*']),
  events: eventsSchema,
  /** Passed to the handler as is (environment variables are substituted). */
  options: expecting(z.record(z.string(), z.unknown()), 'a mapping of options').default({}),
});

/** The whole file. */
export const ravenConfigSchema = strictObject({
  /** Default: $KUBECONFIG, then ~/.kube/config, then the in-cluster service account. */
  kubeconfig: text('a kubeconfig file path').optional(),
  context: text('a context name from the kubeconfig').optional(),
  logLevel: z.enum(LOG_LEVELS).default('info'),
  server: serverSchema.prefault({}),
  checkpoint: checkpointSchema.default({ type: 'memory' }),
  leaderElection: leaderElectionSchema.prefault({}),
  sharding: shardingSchema.prefault({}),
  diff: diffSchema.prefault({}),
  shutdown: shutdownSchema.prefault({}),
  watchers: expecting(z.array(watcherSchema), 'a list of watchers').default([]),
  sinks: expecting(z.array(sinkSchema), 'a list of sinks').default([]),
  /** Omitted: every watcher to every sink. */
  routes: expecting(z.array(routeSchema), 'a list of routes').optional(),
  handlers: expecting(z.array(handlerSchema), 'a list of handlers').default([]),
  /** Built-in translators (OpenStack networking), run while this replica leads. */
  translators: expecting(z.array(translatorSchema), 'a list of translators').default([]),
});

/** The configuration as the schema reads it, before identities and routes are filled in. */
export type ParsedRavenConfig = z.output<typeof ravenConfigSchema>;

export type LogLevel = (typeof LOG_LEVELS)[number];
export type ServerConfig = ParsedRavenConfig['server'];
export type CheckpointConfig = ParsedRavenConfig['checkpoint'];
export type DiffConfig = ParsedRavenConfig['diff'];
export type ShutdownConfig = ParsedRavenConfig['shutdown'];
export type { RouteConfig };
export type HandlerConfig = z.output<typeof handlerSchema>;
/** Leader election; `identity` is always filled in by the loader. */
export type LeaderElectionConfig = ParsedRavenConfig['leaderElection'] & { identity: string };
/** Sharding; `identity` is always filled in by the loader. */
export type ShardingConfig = ParsedRavenConfig['sharding'] & { identity: string };

/**
 * A loaded configuration: defaults applied, paths absolute, `*` in routes and handlers replaced by
 * the names it stands for, and `routes` always present.
 */
export type RavenConfig = Omit<ParsedRavenConfig, 'leaderElection' | 'sharding' | 'routes'> & {
  leaderElection: LeaderElectionConfig;
  sharding: ShardingConfig;
  routes: RouteConfig[];
};
