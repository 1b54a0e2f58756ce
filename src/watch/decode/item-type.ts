/**
 * The type of a list's items. The apiserver writes `kind` and `apiVersion` on the list
 * (`PodList`, `v1`) but not on the items of a built-in type's list, while every watch event's
 * object carries them. A list item is given its list's type, so that an object looks the same
 * whether a list or a watch delivered it: else the first watch event after a list would show
 * `kind` and `apiVersion` as changed, and a name printed as `kind/name` would lose its kind.
 */
import type { KubeObject } from './watch-event.js';

/** The `kind` and `apiVersion` a list's items are of. */
export interface ItemType {
  kind: string;
  apiVersion: string | undefined;
}

/** The items' type from the list's own `kind` (`PodList` → `Pod`) and `apiVersion`. */
export function itemTypeOf(listKind: string, apiVersion: string | undefined): ItemType {
  return { kind: listKind.endsWith('List') ? listKind.slice(0, -4) : listKind, apiVersion };
}

/**
 * `object`, given `kind` and `apiVersion` from `type` where it has none of its own: a new object
 * with them first, as the apiserver writes a watch event's object; `object` itself when it has
 * both (a custom resource's list items do) or there is no type to give.
 */
export function withItemType<T extends object>(object: T, type: ItemType | undefined): T {
  const own = object as KubeObject;
  if (type === undefined || (own.kind !== undefined && own.apiVersion !== undefined)) return object;
  const apiVersion = own.apiVersion ?? type.apiVersion;
  return {
    kind: own.kind ?? type.kind,
    ...(apiVersion === undefined ? {} : { apiVersion }),
    ...object,
  };
}
