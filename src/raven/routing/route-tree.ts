/**
 * Evaluating the route tree for one change: which sinks it goes to. A route applies when the
 * change's watcher and type are among its own, no `drop` rule matches, and `match` is empty or one
 * of its rules matches; then it sends to its sinks and evaluates its children, all of them
 * (`select: all`) or until one applies (`select: first`). Top-level routes are all evaluated.
 *
 * Rules look at the change's subject: for an Event (a change with an `occurrence`), the object it
 * is about, with the occurrence's reason, type, component, message and count; for any other
 * change, the changed object itself (count 1; reason, type, component and message absent, so a
 * rule naming them does not match).
 */
import type { ChangeEvent } from '../model/change-event.js';
import type { RouteConfig, RuleConfig } from '../config/route-schema.js';
import { parseNamespaceScope, type NamespaceScope } from '../../watch/scope/namespace-scope.js';

/** What rules are evaluated against. */
export interface RouteSubject {
  kind: string;
  namespace: string | undefined;
  name: string;
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
  reason: string | undefined;
  type: string | undefined;
  component: string | undefined;
  message: string | undefined;
  count: number;
}

export function routeSubject(event: ChangeEvent): RouteSubject {
  const o = event.occurrence;
  if (o !== undefined) {
    const involved = o.involvedObject;
    return {
      kind: involved.kind,
      namespace: involved.namespace,
      name: involved.name,
      labels: involved.labels,
      annotations: involved.annotations,
      reason: o.reason,
      type: o.type,
      component: o.component,
      message: o.message,
      count: o.count,
    };
  }
  const meta = event.object.metadata;
  return {
    kind: event.resource.kind,
    namespace: event.namespace,
    name: event.name,
    labels: meta?.labels ?? {},
    annotations: meta?.annotations ?? {},
    reason: undefined,
    type: undefined,
    component: undefined,
    message: undefined,
    count: 1,
  };
}

/** Compiled patterns, per rule (rules are immutable once loaded). */
const compiled = new WeakMap<RuleConfig, { namespace?: NamespaceScope; message?: RegExp }>();

function patternsOf(rule: RuleConfig): { namespace?: NamespaceScope; message?: RegExp } {
  let found = compiled.get(rule);
  if (found === undefined) {
    found = {
      ...(rule.namespace === undefined ? {} : { namespace: parseNamespaceScope(rule.namespace) }),
      ...(rule.message === undefined ? {} : { message: new RegExp(rule.message) }),
    };
    compiled.set(rule, found);
  }
  return found;
}

const oneOf = (allowed: readonly string[] | undefined, value: string | undefined): boolean =>
  allowed === undefined || (value !== undefined && allowed.includes(value));

function metadataMatches(
  wanted: Readonly<Record<string, readonly string[]>> | undefined,
  actual: Readonly<Record<string, string>>,
): boolean {
  if (wanted === undefined) return true;
  return Object.entries(wanted).every(([key, values]) => {
    const value = actual[key];
    return value !== undefined && (values.includes('*') || values.includes(value));
  });
}

/** Whether every condition of `rule` holds for `subject` (a rule without conditions always does). */
export function ruleMatches(rule: RuleConfig, subject: RouteSubject): boolean {
  const patterns = patternsOf(rule);
  return (
    oneOf(rule.kind, subject.kind) &&
    oneOf(rule.name, subject.name) &&
    oneOf(rule.reason, subject.reason) &&
    oneOf(rule.type, subject.type) &&
    oneOf(rule.component, subject.component) &&
    (patterns.namespace === undefined ||
      (subject.namespace !== undefined && patterns.namespace.matches(subject.namespace))) &&
    (patterns.message === undefined ||
      (subject.message !== undefined && patterns.message.test(subject.message))) &&
    metadataMatches(rule.labels, subject.labels) &&
    metadataMatches(rule.annotations, subject.annotations) &&
    (rule.minCount === undefined || subject.count >= rule.minCount)
  );
}

/** Whether `route` itself applies to the change (its children are not looked at). */
export function routeApplies(route: RouteConfig, event: ChangeEvent, subject: RouteSubject): boolean {
  if (!route.watchers.includes(event.watcher) || !route.events.includes(event.type)) return false;
  if (route.drop.some((rule) => ruleMatches(rule, subject))) return false;
  return route.match.length === 0 || route.match.some((rule) => ruleMatches(rule, subject));
}

/** The sinks the route tree sends `event` to. */
export function routeSinks(routes: readonly RouteConfig[], event: ChangeEvent): Set<string> {
  const subject = routeSubject(event);
  const sinks = new Set<string>();
  const visit = (route: RouteConfig): boolean => {
    if (!routeApplies(route, event, subject)) return false;
    for (const sink of route.sinks) sinks.add(sink);
    if (route.select === 'all') for (const child of route.routes) visit(child);
    else route.routes.some(visit);
    return true;
  };
  for (const route of routes) visit(route);
  return sinks;
}
