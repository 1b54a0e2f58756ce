/**
 * The `watchers:` entries: what to watch. Selectors and namespace patterns are checked here with
 * the watch engine's own parsers, so a config that loads is a config whose watches can be
 * planned; only the resource name waits for discovery at run time.
 */
import * as z from 'zod';
import { RavenError } from '../../errors/raven-error.js';
import { parseFieldSelector } from '../../watch/scope/field-selector.js';
import { parseNamespaceScope } from '../../watch/scope/namespace-scope.js';
import { parseLabelSelector } from '../../watch/scope/parse-label-selector.js';
import type { ChangeType } from '../model/change-event.js';
import { expecting, nameSchema, oneOrMany, strictObject, text } from './schema-helpers.js';

/** Every change type, in the order events happen to an object. */
export const CHANGE_TYPES: readonly ChangeType[] = ['added', 'modified', 'deleted'];

/** A list of change types; duplicates are dropped. Default: all of them. */
export const eventsSchema = expecting(
  z.array(z.enum(['added', 'modified', 'deleted'])).min(1),
  'a non-empty list of added, modified, deleted',
)
  .transform((events): ChangeType[] => CHANGE_TYPES.filter((type) => events.includes(type)))
  .default([...CHANGE_TYPES]);

/** A refinement that reports what `parse` throws (a Raven error) as an issue; other errors are bugs. */
function refineWith<T>(parse: (value: T) => unknown) {
  return (value: T, ctx: z.RefinementCtx<T>): void => {
    try {
      parse(value);
    } catch (error) {
      if (!(error instanceof RavenError)) throw error;
      ctx.addIssue({ code: 'custom', message: error.message });
    }
  };
}

const RESOURCE_PART = '[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?';
const RESOURCE = new RegExp(`^${RESOURCE_PART}(/${RESOURCE_PART}){0,2}$`);

const namespaceEntry = expecting(
  z.string(),
  'a namespace, a pattern like team-* or an exclusion like !kube-*',
);

/**
 * `namespaces`: one entry or a list; omitted (or `*`) means all. Each entry is checked on its own
 * so the error names it (`namespaces[1]`), then the list as a whole (all excluded?).
 */
const namespacesSchema = oneOrMany(
  namespaceEntry.superRefine(refineWith((entry) => parseNamespaceScope(entry))),
  'a namespace or a list of namespaces, patterns (team-*) and exclusions (!kube-*)',
)
  .superRefine(refineWith((list) => parseNamespaceScope(list)))
  .default([]);

/** Which `modified` events are worth delivering. `added` and `deleted` always pass. */
export const predicatesSchema = strictObject({
  /** Only when `metadata.generation` changed: spec edits, not status or metadata churn. */
  generationChanged: z.boolean().default(false),
  /** Only when one of these paths (or something below it) changed, e.g. `spec.replicas`. */
  fields: z.array(text('a field path such as spec.replicas')).default([]),
  /** Drop updates where nothing but `status` (and ignored noise) changed. */
  ignoreStatusOnly: z.boolean().default(false),
});

/** One watcher of any resource (`type: resource`, the default). */
const resourceWatcherSchema = strictObject({
  name: nameSchema,
  type: z.literal('resource'),
  /** As discovery names it: `pods`, `deployments.apps`, `apps/v1/deployments`, a CRD plural. */
  resource: expecting(
    z.string().trim().regex(RESOURCE),
    'a resource such as pods, deployments.apps, apps/v1/deployments or widgets.example.com',
  ),
  /** Names, patterns and exclusions; `[]` means all namespaces (ignored for cluster-scoped resources). */
  namespaces: namespacesSchema,
  labelSelector: expecting(z.string(), 'a label selector such as "app in (web,api),tier!=cache"')
    .superRefine(refineWith(parseLabelSelector))
    .optional(),
  fieldSelector: expecting(z.string(), 'a field selector such as "status.phase!=Succeeded"')
    .superRefine(refineWith(parseFieldSelector))
    .optional(),
  events: eventsSchema,
  predicates: predicatesSchema.prefault({}),
  /** First run without a checkpoint: `none` records a baseline silently, `added` reports every object. */
  initial: z.enum(['none', 'added']).default('none'),
  /** Drop `metadata.managedFields` while decoding: less memory, and nobody diffs them. */
  dropManagedFields: z.boolean().default(true),
});

/** The Event APIs an events watcher may read; `auto` prefers `events.k8s.io/v1`. */
export const EVENT_APIS = ['auto', 'events.k8s.io/v1', 'v1'] as const;

/** The resource an events watcher resolves, per `api` (`auto` falls back to `v1/events`). */
export const EVENT_RESOURCES: Readonly<Record<(typeof EVENT_APIS)[number], string>> = {
  auto: 'events.k8s.io/v1/events',
  'events.k8s.io/v1': 'events.k8s.io/v1/events',
  v1: 'v1/events',
};

/** Kinds whose objects' metadata is cached to enrich Events, unless `enrich.kinds` says otherwise. */
export const DEFAULT_ENRICH_KINDS = [
  'Pod',
  'ReplicaSet',
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'Job',
  'CronJob',
  'Node',
] as const;

/**
 * A watcher of Kubernetes Events read as occurrences (`docs/events.md`): count and series updates
 * are delivered, old Events are not replayed at start, repeats can be de-duplicated.
 */
const eventsWatcherSchema = strictObject({
  name: nameSchema,
  type: z.literal('events'),
  api: z.enum(EVENT_APIS).default('auto'),
  namespaces: namespacesSchema,
  labelSelector: expecting(z.string(), 'a label selector such as "app in (web,api),tier!=cache"')
    .superRefine(refineWith(parseLabelSelector))
    .optional(),
  fieldSelector: expecting(z.string(), 'a field selector such as "type=Warning"')
    .superRefine(refineWith(parseFieldSelector))
    .optional(),
  /** Deleted Events (expired by the apiserver's TTL) are not occurrences: not delivered by default. */
  events: eventsSchema.default(['added', 'modified']),
  initial: z.enum(['none', 'added']).default('none'),
  dropManagedFields: z.boolean().default(true),
  /** An occurrence that happened longer ago than this when Raven sees it is recorded, not delivered. */
  maxEventAgeSeconds: expecting(
    z.number().min(0),
    'a number of seconds (0 or more; 0 turns the limit off)',
  ).default(300),
  /** Repeats of an occurrence within this many seconds of a delivered one are recorded, not delivered. */
  dedupWindowSeconds: expecting(
    z.number().min(0),
    'a number of seconds (0 or more; 0 turns de-duplication off)',
  ).default(0),
  enrich: strictObject({
    /** Kinds (as discovery names them) whose metadata is cached for enrichment; [] for none. */
    kinds: z.array(text('a kind such as Pod or Deployment')).default([...DEFAULT_ENRICH_KINDS]),
  }).prefault({}),
}).transform((w) => ({ ...w, resource: EVENT_RESOURCES[w.api] }));

/** One watcher; `type` defaults to `resource`. */
export const watcherSchema = z.preprocess(
  (value) =>
    typeof value === 'object' && value !== null && !Array.isArray(value) && !('type' in value)
      ? { type: 'resource', ...value }
      : value,
  z.discriminatedUnion('type', [resourceWatcherSchema, eventsWatcherSchema]),
);

/** Watcher types, in the order documented. */
export const WATCHER_TYPES = ['resource', 'events'] as const;

export type WatcherConfig = z.output<typeof watcherSchema>;
export type ResourceWatcherConfig = Extract<WatcherConfig, { type: 'resource' }>;
export type EventsWatcherConfig = Extract<WatcherConfig, { type: 'events' }>;
export type PredicatesConfig = z.output<typeof predicatesSchema>;
