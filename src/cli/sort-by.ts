/**
 * `raven get --sort-by PATH`: the objects in the order of one field, as `kubectl get --sort-by`
 * orders them. The path is kubectl's (`.metadata.name`, `{.metadata.creationTimestamp}`,
 * `.spec.containers[0].image`), read by the same JSONPath code as `-o jsonpath` and custom columns.
 *
 * Order: numbers by value, booleans false first, anything else as text in natural order (digit
 * runs compared as numbers: `web-2` before `web-10`), which puts RFC 3339 timestamps in time order.
 * Objects without the field come first; when no object has it, that is an error naming the path
 * (as kubectl says it). The sort is stable: objects with equal values keep their order (namespace
 * and name).
 */
import type { KubeObject } from '../client/kube-object.js';
import { parseRelaxedPath, select, TemplateError, valueText, type KubePath } from './jsonpath-template.js';
import { UsageError } from './usage-error.js';

export interface SortBy {
  /** The path as kubectl's messages write it: `{.metadata.name}`. */
  text: string;
  path: KubePath;
}

/** Parse `--sort-by`; a UsageError naming the option when it is not a path. */
export function parseSortBy(text: string): SortBy {
  try {
    const bare = text
      .trim()
      .replace(/^\{(.*)\}$/s, '$1')
      .trim();
    return { text: `{${/^[$@.[]/.test(bare) ? bare : `.${bare}`}}`, path: parseRelaxedPath(text) };
  } catch (err) {
    if (err instanceof TemplateError)
      throw new UsageError(`--sort-by: ${err.message} (e.g. --sort-by=.metadata.creationTimestamp)`);
    throw err;
  }
}

/** `items` sorted by the field; a message (kubectl's) when no item has the field. */
export function sortByField<T extends { object: KubeObject }>(
  items: readonly T[],
  sortBy: SortBy,
): T[] | string {
  const keyed = items.map((item) => ({ item, value: select(sortBy.path, item.object)[0] }));
  if (items.length > 0 && keyed.every((k) => k.value === undefined))
    return `couldn't find any field with path "${sortBy.text}" in the list of objects`;
  return keyed.sort((a, b) => compareValues(a.value, b.value)).map((k) => k.item);
}

function compareValues(a: unknown, b: unknown): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? -1 : 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return naturalCompare(valueText(a), valueText(b));
}

/** Text order with digit runs compared as numbers (`web-2` < `web-10`); otherwise by code unit. */
export function naturalCompare(a: string, b: string): number {
  const parts = (s: string): string[] => s.match(/\d+|\D+/g) ?? [];
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i] ?? '';
    const y = pb[i] ?? '';
    if (x === y) continue;
    if (/^\d/.test(x) && /^\d/.test(y)) {
      const d = Number(x) - Number(y);
      if (d !== 0) return d;
    }
    return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}
