/**
 * Secret data never leaves Raven: before an object reaches a sink, a handler or a diff, the values
 * of a Secret's `data` and `stringData` are replaced by a marker saying how long they were, and the
 * last-applied-configuration annotation (which repeats them) is dropped. Keys stay visible, so
 * "key tls.crt was added" can still be reported; the value cannot.
 */
import type { KubeObject } from '../client/kube-object.js';

export const REDACTED = '[redacted]';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

function isSecret(object: KubeObject, resource?: string): boolean {
  return resource === 'secrets' || (object.kind === 'Secret' && (object.apiVersion ?? 'v1') === 'v1');
}

/**
 * A value redact() already replaced. The daemon redacts each object once, as it enters the
 * watcher's store, but redact() and toChangeEvent() are public and a caller may pass an object it
 * redacted before (a previous state it kept), so redacting stays idempotent: re-measuring a marker would turn
 * `(12 chars)` into `(21 chars)`, and every change to a Secret would report all its keys as
 * changed. A real value never looks like this: `data` is base64, and the apiserver never returns
 * `stringData`.
 */
const MARKER = /^\[redacted\] \(\d+ chars\)$/;

function redactValues(values: unknown): unknown {
  if (typeof values !== 'object' || values === null) return values;
  return Object.fromEntries(
    Object.entries(values as Record<string, unknown>).map(([key, value]) => [
      key,
      typeof value === 'string' && MARKER.test(value)
        ? value
        : `${REDACTED} (${typeof value === 'string' ? value.length : 0} chars)`,
    ]),
  );
}

/**
 * A copy of `object` safe to emit; objects that hold no secret data are returned as they are.
 *
 * @example
 * redact({ kind: 'Secret', apiVersion: 'v1', data: { password: 'aHVudGVyMg==' } })
 * // => { kind: 'Secret', apiVersion: 'v1', data: { password: '[redacted] (12 chars)' } }
 */
export function redact<T extends KubeObject>(object: T, resource?: string): T {
  if (!isSecret(object, resource)) return object;
  const copy = { ...object } as T & { data?: unknown; stringData?: unknown };
  if ('data' in copy) copy.data = redactValues(copy.data);
  if ('stringData' in copy) copy.stringData = redactValues(copy.stringData);
  const annotations = object.metadata?.annotations;
  if (annotations !== undefined && LAST_APPLIED in annotations) {
    const rest = Object.fromEntries(Object.entries(annotations).filter(([key]) => key !== LAST_APPLIED));
    copy.metadata = { ...object.metadata, annotations: rest };
  }
  return copy;
}
