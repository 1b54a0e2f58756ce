/**
 * Finalizers with optimistic concurrency: each write carries the resourceVersion the decision was
 * based on, so a concurrent change makes it fail with 409 Conflict (retry from a fresh read)
 * instead of overwriting another writer's finalizers.
 */
import type { KubeObject } from '../client/kube-object.js';
import type { PatchOptions } from '../client/resource-client.js';

/** The subset of a ResourceClient the helpers use. */
export interface FinalizerClient<T extends KubeObject> {
  patch(name: string, patch: unknown, options: PatchOptions): Promise<T>;
}

export function hasFinalizer(object: KubeObject, finalizer: string): boolean {
  return object.metadata?.finalizers?.includes(finalizer) ?? false;
}

/** Add `finalizer` unless present; returns the updated object (or the same one when nothing changed). */
export async function addFinalizer<T extends KubeObject>(
  client: FinalizerClient<T>,
  object: T,
  finalizer: string,
): Promise<T> {
  if (hasFinalizer(object, finalizer)) return object;
  return writeFinalizers(client, object, [...(object.metadata?.finalizers ?? []), finalizer]);
}

/** Remove `finalizer` if present; returns the updated object (or the same one when nothing changed). */
export async function removeFinalizer<T extends KubeObject>(
  client: FinalizerClient<T>,
  object: T,
  finalizer: string,
): Promise<T> {
  if (!hasFinalizer(object, finalizer)) return object;
  return writeFinalizers(
    client,
    object,
    (object.metadata?.finalizers ?? []).filter((f) => f !== finalizer),
  );
}

function writeFinalizers<T extends KubeObject>(
  client: FinalizerClient<T>,
  object: T,
  finalizers: string[],
): Promise<T> {
  const name = object.metadata?.name ?? '';
  // A merge patch that names the resourceVersion is applied only to that version (409 otherwise).
  const patch = { metadata: { resourceVersion: object.metadata?.resourceVersion, finalizers } };
  const namespace = object.metadata?.namespace;
  return client.patch(name, patch, { type: 'merge', ...(namespace === undefined ? {} : { namespace }) });
}
