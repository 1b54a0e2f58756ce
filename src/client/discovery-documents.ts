/**
 * Turning discovery documents into {@link ApiResource} lists: the aggregated format
 * (apidiscovery.k8s.io v2/v2beta1 APIGroupDiscoveryList, one document for all groups) and the
 * legacy per-group-version APIResourceList. Order is kept: the apiserver lists groups by
 * priority and versions by preference, which is what name resolution relies on.
 */
import type { ApiResource, ApiSubresource } from './api-resource.js';

/** The Accept header asking for aggregated discovery, with plain JSON as fallback. */
export const aggregatedDiscoveryAccept = [
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList',
  'application/json',
].join(',');

type Json = Record<string, unknown>;

const asObject = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const asString = (v: unknown): string => (typeof v === 'string' ? v : '');
const asStrings = (v: unknown): string[] => asArray(v).filter((s): s is string => typeof s === 'string');

/** True when the body is an aggregated discovery document. */
export function isAggregated(doc: unknown): boolean {
  return asObject(doc).kind === 'APIGroupDiscoveryList';
}

/** Resources of an APIGroupDiscoveryList, in document order. */
export function parseAggregated(doc: unknown): ApiResource[] {
  const out: ApiResource[] = [];
  for (const item of asArray(asObject(doc).items)) {
    const group = asString(asObject(asObject(item).metadata).name);
    asArray(asObject(item).versions).forEach((v, index) => {
      const version = asString(asObject(v).version);
      for (const r of asArray(asObject(v).resources)) {
        const res = asObject(r);
        const kind = asString(asObject(res.responseKind).kind);
        out.push({
          group,
          version,
          resource: asString(res.resource),
          singular: asString(res.singularResource) || kind.toLowerCase(),
          kind,
          namespaced: res.scope === 'Namespaced',
          verbs: asStrings(res.verbs),
          shortNames: asStrings(res.shortNames),
          categories: asStrings(res.categories),
          subresources: asArray(res.subresources).map((s): ApiSubresource => {
            const sub = asObject(s);
            return {
              name: asString(sub.subresource),
              kind: asString(asObject(sub.responseKind).kind),
              verbs: asStrings(sub.verbs),
            };
          }),
          preferred: index === 0,
        });
      }
    });
  }
  return out;
}

/** Group versions listed by legacy `/api` (APIVersions) or `/apis` (APIGroupList). */
export function legacyGroupVersions(doc: unknown): { group: string; version: string; preferred: boolean }[] {
  const body = asObject(doc);
  if (body.kind === 'APIVersions') {
    return asStrings(body.versions).map((version, i) => ({ group: '', version, preferred: i === 0 }));
  }
  return asArray(body.groups).flatMap((g) => {
    const group = asObject(g);
    const name = asString(group.name);
    const preferred = asString(asObject(group.preferredVersion).version);
    return asArray(group.versions).map((v) => {
      const version = asString(asObject(v).version);
      return { group: name, version, preferred: version === preferred };
    });
  });
}

/** Resources of a legacy APIResourceList; `name/sub` entries become subresources of `name`. */
export function parseResourceList(
  doc: unknown,
  group: string,
  version: string,
  preferred: boolean,
): ApiResource[] {
  const entries = asArray(asObject(doc).resources).map(asObject);
  const byName = new Map<string, ApiResource>();
  for (const e of entries) {
    const name = asString(e.name);
    if (name.includes('/')) continue;
    const kind = asString(e.kind);
    byName.set(name, {
      group,
      version,
      resource: name,
      singular: asString(e.singularName) || kind.toLowerCase(),
      kind,
      namespaced: e.namespaced === true,
      verbs: asStrings(e.verbs),
      shortNames: asStrings(e.shortNames),
      categories: asStrings(e.categories),
      subresources: [],
      preferred,
    });
  }
  for (const e of entries) {
    const [parent, sub] = asString(e.name).split('/', 2);
    if (parent === undefined || sub === undefined) continue;
    byName.get(parent)?.subresources.push({ name: sub, kind: asString(e.kind), verbs: asStrings(e.verbs) });
  }
  return [...byName.values()];
}
