/**
 * Resolving what a user types to one discovered resource, kubectl style:
 *
 * - `pods`, `pod`, `po`, `Pod`: plural, then singular, then short name, then kind, compared
 *   without case; the first of these tiers with a match decides.
 * - `deployments.apps`, `deployments.v1.apps`: resource.group or resource.version.group.
 * - `apps/v1/deployments`, `v1/pods`: group/version/resource (`core/v1/pods` also works).
 * - `deployments/scale`, `apps/v1/deployments/scale`: a trailing subresource.
 *
 * Without an explicit version only the group's preferred version is considered when it has the
 * resource; among several groups the first in discovery order wins, and the apiserver lists the
 * core group first, so the core group wins ambiguous names (`events`) as it does for kubectl.
 */
import { qualifiedName, type ApiResource, type ResolvedResource } from './api-resource.js';
import { UnknownResourceError } from './unknown-resource-error.js';
import { editDistance as distance } from '../util/edit-distance.js';

interface Query {
  name: string;
  group?: string;
  version?: string;
  subresource?: string;
}

const versionLike = /^v\d+(?:(?:alpha|beta)\d+)?$/;

/** The interpretations of `input`, most specific first. */
export function parseResourceArg(input: string): Query[] {
  const parts = input.trim().split('/');
  const first = parts[0] ?? '';
  if (parts.length === 1) return dotted(first);
  if (versionLike.test(first) && parts.length <= 3) {
    return [withSub({ name: parts[1] ?? '', group: '', version: first }, parts[2])];
  }
  if (parts.length === 2) return dotted(first).map((q) => withSub(q, parts[1]));
  const group = first === 'core' ? '' : first;
  return [withSub({ name: parts[2] ?? '', group, version: parts[1] ?? '' }, parts[3])];
}

function withSub(q: Query, sub: string | undefined): Query {
  return sub === undefined || sub === '' ? q : { ...q, subresource: sub };
}

function dotted(text: string): Query[] {
  const dot = text.indexOf('.');
  if (dot < 0) return [{ name: text }];
  const name = text.slice(0, dot);
  const rest = text.slice(dot + 1);
  const [maybeVersion, ...groupParts] = rest.split('.');
  const queries: Query[] = [];
  if (maybeVersion !== undefined && versionLike.test(maybeVersion) && groupParts.length > 0) {
    queries.push({ name, version: maybeVersion, group: groupParts.join('.') });
  }
  queries.push({ name, group: rest });
  return queries;
}

type Tier = (r: ApiResource, name: string) => boolean;

const tiers: Tier[] = [
  (r, n) => r.resource.toLowerCase() === n,
  (r, n) => r.singular.toLowerCase() === n,
  (r, n) => r.shortNames.some((s) => s.toLowerCase() === n),
  (r, n) => r.kind.toLowerCase() === n,
];

/** The resource `input` names, or undefined when nothing matches. Throws for an unknown subresource. */
export function matchResource(
  resources: readonly ApiResource[],
  input: string,
): ResolvedResource | undefined {
  for (const query of parseResourceArg(input)) {
    const found = matchQuery(resources, query);
    if (found === undefined) continue;
    if (query.subresource === undefined) return found;
    const sub = found.subresources.find((s) => s.name === query.subresource);
    if (sub === undefined) {
      const known = found.subresources.map((s) => s.name).join(', ') || 'none';
      throw new UnknownResourceError(
        input,
        `${qualifiedName(found)} has no subresource ${JSON.stringify(query.subresource)} (it has: ${known})`,
      );
    }
    return { ...found, subresource: sub };
  }
  return undefined;
}

function matchQuery(resources: readonly ApiResource[], q: Query): ApiResource | undefined {
  const name = q.name.toLowerCase();
  const scoped = resources.filter(
    (r) =>
      (q.group === undefined || r.group === q.group) && (q.version === undefined || r.version === q.version),
  );
  for (const tier of tiers) {
    const hits = scoped.filter((r) => tier(r, name));
    if (hits.length === 0) continue;
    if (q.version !== undefined) return hits[0];
    return hits.find((r) => r.preferred) ?? hits[0];
  }
  return undefined;
}

/** Up to `max` qualified names close to `input`, for "did you mean" messages. */
export function closeMatches(resources: readonly ApiResource[], input: string, max = 5): string[] {
  const needle = (parseResourceArg(input)[0]?.name ?? input).toLowerCase();
  const scored = new Map<string, number>();
  for (const r of resources) {
    const names = [r.resource, r.singular, r.kind, ...r.shortNames].map((n) => n.toLowerCase());
    const best = Math.min(...names.map((n) => distance(needle, n)));
    const near =
      best <= Math.max(1, Math.floor(needle.length / 3)) || names.some((n) => n.startsWith(needle));
    if (!near || needle === '') continue;
    const key = qualifiedName(r);
    scored.set(key, Math.min(scored.get(key) ?? Infinity, best));
  }
  return [...scored.entries()]
    .sort((a, b) => a[1] - b[1])
    .slice(0, max)
    .map(([key]) => key);
}
