/**
 * Dropping `metadata.managedFields`, the one way Raven does it. Server-side apply bookkeeping is
 * often the largest part of an object and is useless to a watcher or a cache:
 * {@link dropManagedFields} removes it from an object (a ready-made store transform), and the
 * parsers cut it out of the raw text before `JSON.parse`, which then never builds it.
 *
 * Contract: the result equals parse-then-delete. The cut is only an optimisation: when the scanner
 * is unsure where the member is, the whole text is parsed and the member deleted afterwards, and
 * the member is always deleted from the result, so duplicate keys cannot leak it. The content of a
 * cut member is not validated.
 */
import { concatBytes, copyOut, utf8 } from './bytes.js';
import { isPlainObject } from './plain-object.js';
import { failed, scanObject, skipValue, skipWhitespace, type Member } from './json-scanner.js';
import { managedFieldsSpan, MANAGED_FIELDS_PARENTS } from './managed-fields-span.js';

/** Where the object metadata sits: in a watch event (`object.metadata`) or at the top (`metadata`). */
export type ManagedFieldsLocation = 'event' | 'object';

/** Anything with optional metadata that may carry managedFields. */
export interface ObjectWithManagedFields {
  metadata?: { managedFields?: unknown } | undefined;
}

/**
 * Return `obj` without `metadata.managedFields`. The input is not modified: a shallow copy of the
 * object and its metadata is made only when there is something to drop.
 *
 * @example
 * const store = new MemoryStore<Pod>({ transform: dropManagedFields });
 */
export function dropManagedFields<T extends ObjectWithManagedFields>(obj: T): T {
  const metadata = obj.metadata;
  if (metadata?.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...rest } = metadata;
  return { ...obj, metadata: rest };
}

const paths: Record<ManagedFieldsLocation, readonly string[]> = {
  event: ['object', 'metadata', 'managedFields'],
  object: ['metadata', 'managedFields'],
};

/**
 * `JSON.parse(text)` without `metadata.managedFields`. Throws what `JSON.parse` throws.
 *
 * @example
 * parseWithoutManagedFields('{"metadata":{"name":"a","managedFields":[{"manager":"kubectl"}]}}', 'object');
 * // => { metadata: { name: 'a' } }
 */
export function parseWithoutManagedFields(text: string, location: ManagedFieldsLocation): unknown {
  return parseBytesWithoutManagedFields(Buffer.from(text), location, text);
}

/**
 * {@link parseWithoutManagedFields} for raw UTF-8 bytes: the member is found in the bytes (see
 * `managed-fields-span.ts`) and only the rest is decoded and parsed. Where it is not laid out as
 * the apiserver writes it, the member is looked for by walking the object's members (`cutMember`);
 * `text`, when the caller has decoded the bytes already, is parsed when it is not found there either.
 */
export function parseBytesWithoutManagedFields(
  bytes: Uint8Array,
  location: ManagedFieldsLocation,
  text?: string,
): unknown {
  const span = managedFieldsSpan(bytes, MANAGED_FIELDS_PARENTS[location]);
  if (span === undefined) {
    const cut = cutMember(bytes, skipWhitespace(bytes, 0), paths[location]);
    return withoutManagedFields(JSON.parse(cut === undefined ? (text ?? utf8(bytes)) : utf8(cut)), location);
  }
  // The cut is at ASCII bytes (a comma or a quote), never inside a multi-byte character.
  return withoutManagedFields(
    JSON.parse(utf8(bytes.subarray(0, span[0])) + utf8(bytes.subarray(span[1]))),
    location,
  );
}

/**
 * `JSON.parse` of `bytes` (without managedFields when `drop`, as {@link parseBytesWithoutManagedFields}
 * gives it), with the bytes it parsed copied out of `bytes` (`copyOut`), for a caller that hands
 * them on. `json` is undefined when they are not the value's: a duplicate key left a member the
 * cut missed (dropped from the value, still in the bytes). Undefined when the member cannot be
 * found in the bytes for sure: the caller parses as usual.
 */
export function parseBytesCopied(
  bytes: Uint8Array,
  location: ManagedFieldsLocation,
  drop: boolean,
): { value: unknown; json: Buffer | undefined } | undefined {
  if (!drop) {
    const json = copyOut(bytes);
    return { value: JSON.parse(utf8(json)), json };
  }
  const span = managedFieldsSpan(bytes, MANAGED_FIELDS_PARENTS[location]);
  if (span === undefined) return undefined;
  // The cut is at ASCII bytes (a comma or a quote), never inside a multi-byte character.
  const json = copyOut(bytes.subarray(0, span[0]), bytes.subarray(span[1]));
  const value = JSON.parse(utf8(json)) as unknown;
  // Asked first: the cleaning replaces an event's object in place.
  const left = hasManagedFields(value, location);
  return { value: withoutManagedFields(value, location), json: left ? undefined : json };
}

/** `bytes` with the member at `path` removed, or undefined when it is absent or not found for sure. */
export function cutMember(bytes: Uint8Array, open: number, path: readonly string[]): Uint8Array | undefined {
  const [head, ...rest] = path;
  let found: Member | undefined;
  const end = scanObject(bytes, open, (member) => {
    if (member.key !== head) return true;
    found = member;
    return false;
  });
  if (failed(end) || found === undefined) return undefined;
  if (rest.length > 0) {
    return bytes[found.valueStart] === 0x7b ? cutMember(bytes, found.valueStart, rest) : undefined;
  }
  const valueEnd = skipValue(bytes, found.valueStart);
  if (valueEnd < 0) return undefined;
  if (found.commaBefore >= 0)
    return concatBytes(
      [bytes.subarray(0, found.commaBefore), bytes.subarray(valueEnd)],
      bytes.length - (valueEnd - found.commaBefore),
    );
  const next = skipWhitespace(bytes, valueEnd);
  const to = bytes[next] === 0x2c ? next + 1 : valueEnd;
  return concatBytes(
    [bytes.subarray(0, found.keyStart), bytes.subarray(to)],
    bytes.length - (to - found.keyStart),
  );
}

/** Whether a parsed value (before {@link withoutManagedFields}) still has managedFields at `location`. */
function hasManagedFields(value: unknown, location: ManagedFieldsLocation): boolean {
  const object = location === 'event' && isPlainObject(value) ? value.object : value;
  return (
    isPlainObject(object) && isPlainObject(object.metadata) && object.metadata.managedFields !== undefined
  );
}

/**
 * A freshly parsed value without managedFields at `location`; whatever the cut left (a duplicate
 * key) is dropped here. An event's `object` is replaced in place: the event is the caller's own.
 */
function withoutManagedFields(value: unknown, location: ManagedFieldsLocation): unknown {
  if (!isPlainObject(value)) return value;
  if (location === 'object') return isPlainObject(value.metadata) ? dropManagedFields(value) : value;
  const object = value.object;
  if (isPlainObject(object) && isPlainObject(object.metadata)) value.object = dropManagedFields(object);
  return value;
}
