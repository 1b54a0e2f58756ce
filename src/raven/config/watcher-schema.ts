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
import type { ChangeType } from '../change-event.js';
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

/** One watcher. */
export const watcherSchema = strictObject({
  name: nameSchema,
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

export type WatcherConfig = z.output<typeof watcherSchema>;
export type PredicatesConfig = z.output<typeof predicatesSchema>;
