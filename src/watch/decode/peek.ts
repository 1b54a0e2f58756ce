/**
 * Pre-parse helpers: read a watch event's `type` and an object's identifying metadata from the raw
 * JSON bytes without decoding or parsing them, so a caller can drop an event, or skip an object
 * whose resourceVersion it already has, before paying for `JSON.parse` (which dominates decoding
 * cost).
 *
 * Contract: a peek is either undefined ("not sure": the bytes are not shaped as expected where the
 * scanner looked, or end before it found what it reads) or exact: every field it reads holds what
 * `JSON.parse` would give, and such a field is undefined only when the member is absent or not a
 * string. The scanner stops as soon as it has what it wants, so damage further on is not seen:
 * only a parse validates a whole line. Duplicate keys are assumed absent, as the apiserver never
 * emits them.
 */
import {
  failed,
  hasEscape,
  keyIs,
  readString,
  readStringAt,
  sameAscii,
  skipString,
  skipWhitespace,
  walkObject,
} from './json-scanner.js';
import { isPlainObject } from './plain-object.js';

/** The identifying metadata of an object, as strings. */
export interface ObjectPeek {
  resourceVersion?: string;
  name?: string;
  namespace?: string;
  uid?: string;
}

/** A watch event's type plus its object's identifying metadata. */
export interface WatchEventPeek extends ObjectPeek {
  type: string;
}

const metaFields = ['resourceVersion', 'name', 'namespace', 'uid'] as const;

/**
 * Which members of {@link ObjectPeek} a peek reads: a bit per field ({@link PEEK_FIELD}), all of
 * them by default. A peek told to read fewer leaves the others undefined and stops reading the
 * metadata as soon as it has those it was told to read: a filter that needs only a uid and a
 * resourceVersion does not walk on through labels and managedFields looking for a namespace a
 * cluster-scoped object does not have.
 */
export type PeekFields = number;
export const PEEK_FIELD = { resourceVersion: 1, name: 2, namespace: 4, uid: 8 } as const;
/** Every field of {@link ObjectPeek}: the default. */
export const ALL_PEEK_FIELDS: PeekFields = 15;

/** The {@link PeekFields} naming `fields`. */
export function peekFields(fields: Iterable<keyof ObjectPeek>): PeekFields {
  let bits = 0;
  for (const field of fields) bits |= PEEK_FIELD[field];
  return bits;
}

/**
 * Identifying metadata of the object `bytes` hold (after any whitespace): the `fields` of it.
 *
 * @example
 * peekObject(Buffer.from('{"kind":"Pod","metadata":{"name":"web-0","resourceVersion":"42"}}'));
 * // => { name: 'web-0', resourceVersion: '42' }
 */
// The scans compare keys where they are written (walkObject, keyIs) and make no string for a key
// they pass over: a peek is paid on every event a filter drops, so it must cost little beside
// the parse it saves.
export function peekObject(bytes: Uint8Array, fields: PeekFields = ALL_PEEK_FIELDS): ObjectPeek | undefined {
  const peek: ObjectPeek = {};
  return peekObjectAt(bytes, 0, fields, peek) ? peek : undefined;
}

/** Reads the object's identifying metadata into `peek`; false when not sure. */
function peekObjectAt(b: Uint8Array, start: number, fields: PeekFields, peek: ObjectPeek): boolean {
  let sure = true as boolean;
  const end = walkObject(b, skipWhitespace(b, start), (keyStart, keyEnd, valueStart) => {
    if (!keyIs(b, keyStart, keyEnd, 'metadata')) return true;
    if (b[valueStart] === 0x7b) sure = peekMetadata(b, valueStart, peek, fields);
    return false;
  });
  return sure && !failed(end);
}

/**
 * Which of {@link metaFields} the key spanning `[keyStart, keyEnd)` is: by its length, then its
 * bytes where it is written; a key written with escapes (longer than what it decodes to) decoded.
 */
function metaFieldAt(
  b: Uint8Array,
  keyStart: number,
  keyEnd: number,
): (typeof metaFields)[number] | undefined {
  const length = keyEnd - keyStart - 2;
  const plain =
    length === 3
      ? 'uid'
      : length === 4
        ? 'name'
        : length === 9
          ? 'namespace'
          : length === 15
            ? 'resourceVersion'
            : undefined;
  if (plain !== undefined && keyIs(b, keyStart, keyEnd, plain)) return plain;
  if (!hasEscape(b, keyStart, keyEnd)) return undefined;
  const key = readString(b, keyStart, keyEnd);
  return metaFields.find((name) => name === key);
}

/**
 * Reads the {@link metaFields} in `fields` from the metadata object opening at `b[open]` into
 * `peek`; false when not sure. It stops once it has them all: a field it has not met by the end
 * of the metadata is absent.
 */
function peekMetadata(b: Uint8Array, open: number, peek: ObjectPeek, fields: PeekFields): boolean {
  let seen = 0; // a bit per field of metaFields
  let sure = true as boolean;
  const end = walkObject(b, open, (keyStart, keyEnd, valueStart) => {
    const field = metaFieldAt(b, keyStart, keyEnd);
    if (field === undefined || (fields & PEEK_FIELD[field]) === 0) return true;
    if (b[valueStart] === 0x22) {
      const value = readStringAt(b, valueStart);
      if (value === undefined) sure = false;
      else peek[field] = value;
    }
    seen |= PEEK_FIELD[field];
    return sure && (seen & fields) !== fields;
  });
  return sure && !failed(end);
}

/** The event types, made once: a peek of a type written plainly makes no string. */
const EVENT_TYPES = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'] as const;

/** The `type` string starting at `b[i]`: one of {@link EVENT_TYPES} as made once, else decoded. */
function readTypeAt(b: Uint8Array, i: number): string | undefined {
  if (b[i] !== 0x22) return undefined;
  const end = skipString(b, i);
  if (end < 0) return undefined;
  for (const type of EVENT_TYPES) if (sameAscii(b, i + 1, end - 1, type)) return type;
  return readString(b, i, end);
}

/**
 * The type and object metadata of one watch-event line, or undefined when the line does not look
 * like a watch event (no string `type`, no object `object`): such a line must be parsed to learn
 * what is wrong with it.
 *
 * @example
 * peekWatchEvent(Buffer.from('{"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"7"}}}'));
 * // => { type: 'MODIFIED', name: 'a', resourceVersion: '7' }
 */
export function peekWatchEvent(
  bytes: Uint8Array,
  fields: PeekFields = ALL_PEEK_FIELDS,
): WatchEventPeek | undefined {
  // The object's fields are read into the event's peek itself; `type` is set once it is read.
  const peek: WatchEventPeek = { type: '' };
  let typed = false as boolean;
  let object = false as boolean;
  let sure = true as boolean;
  const end = walkObject(bytes, skipWhitespace(bytes, 0), (keyStart, keyEnd, valueStart) => {
    if (keyIs(bytes, keyStart, keyEnd, 'type')) {
      const type = readTypeAt(bytes, valueStart);
      if (type === undefined) sure = false;
      else {
        peek.type = type;
        typed = true;
      }
    } else if (keyIs(bytes, keyStart, keyEnd, 'object')) {
      sure = bytes[valueStart] === 0x7b && peekObjectAt(bytes, valueStart, fields, peek);
      object = true;
    }
    return sure && !(typed && object);
  });
  return sure && !failed(end) && typed && object ? peek : undefined;
}

/** The same fields taken from an already parsed object, for when the text could not be peeked. */
export function objectPeekOf(object: unknown): ObjectPeek {
  const metadata = isPlainObject(object) ? object.metadata : undefined;
  const peek: ObjectPeek = {};
  if (!isPlainObject(metadata)) return peek;
  for (const field of metaFields) {
    const value = metadata[field];
    if (typeof value === 'string') peek[field] = value;
  }
  return peek;
}
