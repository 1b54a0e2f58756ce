/**
 * Pre-parse helpers: read a watch event's `type` and an object's identifying metadata from the raw
 * JSON text without parsing it, so a caller can drop an event, or skip an object whose
 * resourceVersion it already has, before paying for `JSON.parse` (which dominates decoding cost).
 *
 * Contract: a peek is either undefined ("not sure": the text is not shaped as expected where the
 * scanner looked) or exact: every field holds what `JSON.parse` would give, and a field is
 * undefined only when the member is absent or not a string. The scanner stops as soon as it has
 * what it wants, so damage further on in the text is not seen: only a parse validates a whole line.
 * Duplicate keys are assumed absent, as the apiserver never emits them.
 */
import {
  CUT,
  failed,
  hasEscape,
  keyIs,
  readString,
  readStringAt,
  skipWhitespace,
  walkObject,
} from './json-scanner.js';
import { utf8 } from './bytes.js';
import { isJsonWhitespace } from './json-bytes.js';
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
 * Identifying metadata of the object `text` holds (after any whitespace). With `prefixOf`, `text`
 * is the decoded start of those bytes, and a field the prefix did not reach may be settled from them.
 *
 * @example
 * peekObject('{"kind":"Pod","metadata":{"name":"web-0","resourceVersion":"42"}}');
 * // => { name: 'web-0', resourceVersion: '42' }
 */
// The scans compare keys where they are written (walkObject, keyIs) and make no string for a key
// they pass over: a peek is paid on every event a filter drops, so it must cost little beside
// the parse it saves.
export function peekObject(text: string, prefixOf?: Uint8Array): ObjectPeek | undefined {
  return peekObjectAt(text, 0, prefixOf);
}

function peekObjectAt(text: string, start: number, prefixOf: Uint8Array | undefined): ObjectPeek | undefined {
  const open = skipWhitespace(text, start);
  const peek: ObjectPeek = {};
  let sure = true as boolean;
  const end = walkObject(text, open, (keyStart, keyEnd, valueStart) => {
    if (!keyIs(text, keyStart, keyEnd, 'metadata')) return true;
    if (text.charCodeAt(valueStart) === 0x7b) sure = peekMetadata(text, valueStart, peek, prefixOf);
    return false;
  });
  return sure && !failed(end) ? peek : undefined;
}

/**
 * Which of {@link metaFields} the key spanning `[keyStart, keyEnd)` is: by its length, then its
 * text where it is written; a key written with escapes (longer than what it decodes to) decoded.
 */
function metaFieldAt(
  text: string,
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
  if (plain !== undefined && text.startsWith(plain, keyStart + 1)) return plain;
  if (!hasEscape(text, keyStart, keyEnd)) return undefined;
  const key = readString(text, keyStart, keyEnd);
  return metaFields.find((name) => name === key);
}

/**
 * Reads {@link metaFields} from the metadata object opening at `text[open]` into `peek`; false when
 * not sure. When `text` is a prefix of `prefixOf` and ends inside the metadata after the fields it
 * has (a cluster-scoped object has no namespace, so the scan reads on through labels and
 * managedFields), a missing field is known absent when its quoted key is nowhere in the whole
 * text's bytes and neither is a `\u` escape (the only escape that could spell it): one native
 * byte search instead of decoding the whole text.
 */
function peekMetadata(
  text: string,
  open: number,
  peek: ObjectPeek,
  prefixOf: Uint8Array | undefined,
): boolean {
  let seen = 0; // a bit per field of metaFields
  let sure = true as boolean;
  const end = walkObject(text, open, (keyStart, keyEnd, valueStart) => {
    const field = metaFieldAt(text, keyStart, keyEnd);
    if (field === undefined) return true;
    if (text.charCodeAt(valueStart) === 0x22) {
      const value = readStringAt(text, valueStart);
      if (value === undefined) sure = false;
      else peek[field] = value;
    }
    seen |= FIELD_BIT[field];
    return sure && seen !== ALL_FIELDS;
  });
  if (!sure) return false;
  if (end !== CUT || prefixOf === undefined) return !failed(end);
  for (const field of metaFields)
    if ((seen & FIELD_BIT[field]) === 0 && !absentFrom(prefixOf, QUOTED_KEY[field])) return false;
  return true;
}

const FIELD_BIT = { resourceVersion: 1, name: 2, namespace: 4, uid: 8 } as const;
const ALL_FIELDS = 15;
const QUOTED_KEY = {
  resourceVersion: Buffer.from('"resourceVersion"'),
  name: Buffer.from('"name"'),
  namespace: Buffer.from('"namespace"'),
  uid: Buffer.from('"uid"'),
} as const;
const UNICODE_ESCAPE = Buffer.from('\\u');

/**
 * Whether `key` (quoted, as bytes) is a member key nowhere in `bytes`: each place it is written is
 * followed by something other than a colon (it is a string value), and no `\\u` escape could
 * spell it another way.
 */
function absentFrom(bytes: Uint8Array, key: Buffer): boolean {
  const buffer = Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = buffer.indexOf(key); at >= 0; at = buffer.indexOf(key, at + 1)) {
    let after = at + key.length;
    while (after < buffer.length && isJsonWhitespace(buffer[after] as number)) after++;
    if (buffer[after] === 0x3a) return false;
  }
  return buffer.indexOf(UNICODE_ESCAPE) < 0;
}

/**
 * The type and object metadata of one watch-event line, or undefined when the line does not look
 * like a watch event (no string `type`, no object `object`): such a line must be parsed to learn
 * what is wrong with it.
 *
 * @example
 * peekWatchEvent('{"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"7"}}}');
 * // => { type: 'MODIFIED', name: 'a', resourceVersion: '7' }
 */
export function peekWatchEvent(line: string, prefixOf?: Uint8Array): WatchEventPeek | undefined {
  // Assigned in the visitor; the casts stop flow analysis from assuming the initial values.
  let type = undefined as string | undefined;
  let object = undefined as ObjectPeek | undefined;
  let sure = true as boolean;
  const end = walkObject(line, skipWhitespace(line, 0), (keyStart, keyEnd, valueStart) => {
    if (keyIs(line, keyStart, keyEnd, 'type')) {
      type = readStringAt(line, valueStart);
      sure = type !== undefined;
    } else if (keyIs(line, keyStart, keyEnd, 'object')) {
      object = line.charCodeAt(valueStart) === 0x7b ? peekObjectAt(line, valueStart, prefixOf) : undefined;
      sure = object !== undefined;
    }
    return sure && (type === undefined || object === undefined);
  });
  if (!sure || failed(end) || type === undefined || object === undefined) return undefined;
  return { type, ...object };
}

/**
 * Bytes decoded for a first peek, then a second. An object's identifying metadata comes first in
 * the apiserver's output (name, generateName, namespace, uid and resourceVersion lead ObjectMeta),
 * within the first few hundred bytes; the rest of a large object need not be decoded to learn that
 * it is unchanged, or that it is another replica's. Decoding costs per byte (a quarter of the
 * peek's cost at 2 KiB), so a short prefix is tried first, a longer one when its end cut a member.
 */
export const PEEK_PREFIX_BYTES = [512, 2048] as const;

/**
 * {@link peekObject} or {@link peekWatchEvent} of raw UTF-8 bytes: first on decoded prefixes
 * ({@link PEEK_PREFIX_BYTES}, each peeked as a prefix of `bytes`), then, when they did not settle
 * it (a member or a character cut at a prefix's end reads as "not sure"), on `whole()`, the whole
 * text.
 */
export function peekBytes<P>(
  bytes: Uint8Array,
  peek: (text: string, prefixOf?: Uint8Array) => P | undefined,
  whole: () => string,
): P | undefined {
  for (const prefix of PEEK_PREFIX_BYTES) {
    if (bytes.length <= prefix) break;
    const sure = peek(utf8(bytes, prefix), bytes);
    if (sure !== undefined) return sure;
  }
  return peek(whole());
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
