/**
 * The `routes:` entries: a tree. Each route names watchers (children inherit their parent's),
 * event types, `drop` and `match` rules, sinks, and child routes chosen all at once (`select:
 * all`) or the first that matches (`select: first`). Rules are checked here: namespace patterns
 * with the watch engine's own parser, message regexes by compiling them.
 */
import * as z from 'zod';
import { RavenError } from '../../errors/raven-error.js';
import { parseNamespaceScope } from '../../watch/scope/namespace-scope.js';
import type { ChangeType } from '../model/change-event.js';
import { eventsSchema } from './watcher-schema.js';
import { expecting, oneOrMany, strictObject, text } from './schema-helpers.js';

/** Names, or `*` for all; parsed to a list. */
export const targets = (what: string) =>
  oneOrMany(expecting(z.string().min(1), `a ${what} name or "*"`), `a ${what} name, "*", or a list of names`);

const names = (what: string) => oneOrMany(text(what), `${what}, or a list of them`);

/** Label or annotation conditions: each key's value, one of several, or `*` for any value. */
const metadataMatch = (what: string) =>
  expecting(
    z.record(z.string().min(1), z.union([z.string(), z.array(z.string())])),
    `a mapping of ${what} keys to a value, a list of values, or "*" for any value`,
  ).transform((record) =>
    Object.fromEntries(Object.entries(record).map(([k, v]) => [k, Array.isArray(v) ? v : [v]])),
  );

const namespacePatterns = oneOrMany(
  expecting(z.string(), 'a namespace, a pattern like team-* or an exclusion like !kube-*'),
  'a namespace or a list of namespaces, patterns (team-*) and exclusions (!kube-*)',
).superRefine((list, ctx) => {
  try {
    parseNamespaceScope(list);
  } catch (error) {
    if (!(error instanceof RavenError)) throw error;
    ctx.addIssue({ code: 'custom', message: error.message });
  }
});

const messageRegex = expecting(z.string(), 'a regular expression such as "OOMKilled|Back-off"').superRefine(
  (source, ctx) => {
    try {
      new RegExp(source);
    } catch (error) {
      ctx.addIssue({
        code: 'custom',
        message: `invalid regular expression ${JSON.stringify(source)}: ${(error as Error).message}`,
      });
    }
  },
);

/**
 * One condition on a change: every field given must hold. For an events watcher the fields are
 * the occurrence's (its involved object's kind, namespace, labels, ...); for other watchers the
 * changed object's (reason, type, component and message never match them).
 */
export const ruleSchema = strictObject({
  kind: names('a kind such as Pod').optional(),
  namespace: namespacePatterns.optional(),
  name: names('an object name').optional(),
  reason: names('a reason such as BackOff').optional(),
  type: names('an Event type: Normal or Warning').optional(),
  component: names('a reporting component such as kubelet').optional(),
  message: messageRegex.optional(),
  labels: metadataMatch('label').optional(),
  annotations: metadataMatch('annotation').optional(),
  minCount: expecting(z.int().min(1), 'an integer of at least 1').optional(),
});

const rules = expecting(z.array(ruleSchema), 'a list of rules, e.g. [{ type: Warning }]').default([]);

/** The settings of a route at any depth; `watchers` only where it narrows. */
const routeFields = {
  sinks: targets('sink').default([]),
  events: eventsSchema,
  drop: rules,
  match: rules,
  select: z.enum(['all', 'first']).default('all'),
};

/** A route as parsed: `*` not yet expanded, a child's watchers maybe inherited. */
export interface ParsedRoute {
  watchers?: string[] | undefined;
  sinks: string[];
  events: ChangeType[];
  drop: RuleConfig[];
  match: RuleConfig[];
  select: 'all' | 'first';
  routes: ParsedRoute[];
}

/** A child route: inherits its parent's watchers unless it names some. */
const childRouteSchema: z.ZodType<ParsedRoute> = z.lazy(() =>
  strictObject({
    watchers: targets('watcher').optional(),
    ...routeFields,
    routes: childRoutes,
  }).superRefine(needsTarget),
);

const childRoutes = z.lazy(() => expecting(z.array(childRouteSchema), 'a list of routes').default([]));

/** A top-level route. */
export const routeSchema = strictObject({
  watchers: targets('watcher'),
  ...routeFields,
  routes: childRoutes,
}).superRefine(needsTarget);

function needsTarget(route: { sinks: string[]; routes: unknown[] }, ctx: z.RefinementCtx): void {
  if (route.sinks.length === 0 && route.routes.length === 0)
    ctx.addIssue({
      code: 'custom',
      path: ['sinks'],
      message: 'a route needs sinks, child routes, or both; e.g. sinks: [console]',
    });
}

export type RuleConfig = z.output<typeof ruleSchema>;

/** A loaded route: watchers resolved (inherited, `*` expanded) at every depth. */
export interface RouteConfig {
  watchers: string[];
  sinks: string[];
  events: ChangeType[];
  drop: RuleConfig[];
  match: RuleConfig[];
  select: 'all' | 'first';
  routes: RouteConfig[];
}

/** Every route of a tree, parents before children, with its path in the config. */
export function flattenRoutes(
  routes: readonly RouteConfig[],
  path: (string | number)[] = ['routes'],
): { route: RouteConfig; path: (string | number)[] }[] {
  return routes.flatMap((route, i) => [
    { route, path: [...path, i] },
    ...flattenRoutes(route.routes, [...path, i, 'routes']),
  ]);
}
