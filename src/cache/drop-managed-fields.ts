/**
 * A ready-made store transform. `metadata.managedFields` (server-side apply bookkeeping) is often
 * the largest part of an object and no controller reads it from a cache; dropping it before the
 * object is stored typically halves the memory a cache uses.
 */

/** Anything with optional metadata that may carry managedFields. */
export interface ObjectWithManagedFields {
  metadata?: { managedFields?: unknown } | undefined;
}

/**
 * Return `obj` without `metadata.managedFields`. The input is not modified: a shallow copy of the
 * object and its metadata is made only when there is something to drop.
 *
 * @example
 * const store = createStore<Pod>({ transform: dropManagedFields });
 */
export function dropManagedFields<T extends ObjectWithManagedFields>(obj: T): T {
  const metadata = obj.metadata;
  if (metadata?.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...rest } = metadata;
  return { ...obj, metadata: rest };
}
