/**
 * Secret data never leaves Raven: before an object reaches a sink, a handler or a diff, the values
 * of a Secret's `data` and `stringData` are replaced by a marker saying how long they were and a
 * fingerprint of the value, and the last-applied-configuration annotation (which repeats them) is
 * dropped. Keys stay visible, so "key tls.crt was added" can still be reported, and so can a
 * rotation to a value of the same length (its fingerprint differs); the value cannot.
 *
 * The fingerprint is a keyed hash, HMAC-SHA256 with this installation's redaction key, cut to
 * 12 hex digits: without the key nobody can test guesses against it, as they could against a
 * plain hash of a short password. The key is installed once per process ({@link useRedactionKey},
 * loaded by `loadRedactionKey`); until then a random key made for this process is used, so
 * fingerprints compare within the process only.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { KubeObject } from '../../client/kube-object.js';

export const REDACTED = '[redacted]';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** 48 bits: a rotation goes unnoticed with odds of 1 in 2^48, and the marker stays short. */
const FINGERPRINT_HEX_DIGITS = 12;

let installedKey: Uint8Array | undefined;

/** Use `key` for every fingerprint this process makes from now on. */
export function useRedactionKey(key: Uint8Array): void {
  installedKey = key;
}

function currentKey(): Uint8Array {
  installedKey ??= randomBytes(32);
  return installedKey;
}

/** The short keyed hash of a secret value that redact() shows in place of the value. */
export function fingerprint(value: string, key: Uint8Array = currentKey()): string {
  return createHmac('sha256', key).update(value).digest('hex').slice(0, FINGERPRINT_HEX_DIGITS);
}

function isSecret(object: KubeObject, resource?: string): boolean {
  return resource === 'secrets' || (object.kind === 'Secret' && (object.apiVersion ?? 'v1') === 'v1');
}

/**
 * A value redact() already replaced. The daemon redacts each object once, as it enters the
 * watcher's store, but redact() and toChangeEvent() are public and a caller may pass an object it
 * redacted before (a previous state it kept), so redacting stays idempotent: re-measuring a marker
 * would turn `(12 chars)` into `(38 chars)`, and every change to a Secret would report all its keys
 * as changed. A real value never looks like this: `data` is base64, and the apiserver never
 * returns `stringData`. The fingerprint is optional so that objects redacted before it existed (in
 * a checkpoint) are still recognised.
 */
const MARKER = /^\[redacted\] \(\d+ chars(, hmac [0-9a-f]+)?\)$/;

function redactValues(values: unknown, key: Uint8Array): unknown {
  if (typeof values !== 'object' || values === null) return values;
  return Object.fromEntries(
    Object.entries(values as Record<string, unknown>).map(([name, value]) => [
      name,
      typeof value !== 'string'
        ? `${REDACTED} (0 chars)`
        : MARKER.test(value)
          ? value
          : `${REDACTED} (${value.length} chars, hmac ${fingerprint(value, key)})`,
    ]),
  );
}

/**
 * A copy of `object` safe to emit; objects that hold no secret data are returned as they are.
 *
 * @example
 * redact({ kind: 'Secret', apiVersion: 'v1', data: { password: 'aHVudGVyMg==' } })
 * // => { kind: 'Secret', apiVersion: 'v1', data: { password: '[redacted] (12 chars, hmac 5f0c2a9e41b7)' } }
 */
export function redact<T extends KubeObject>(
  object: T,
  resource?: string,
  key: Uint8Array = currentKey(),
): T {
  if (!isSecret(object, resource)) return object;
  const copy = { ...object } as T & { data?: unknown; stringData?: unknown };
  if ('data' in copy) copy.data = redactValues(copy.data, key);
  if ('stringData' in copy) copy.stringData = redactValues(copy.stringData, key);
  const annotations = object.metadata?.annotations;
  if (annotations !== undefined && LAST_APPLIED in annotations) {
    const rest = Object.fromEntries(Object.entries(annotations).filter(([key]) => key !== LAST_APPLIED));
    copy.metadata = { ...object.metadata, annotations: rest };
  }
  return copy;
}
