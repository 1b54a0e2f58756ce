/**
 * Where `metadata.managedFields` sits in the raw bytes of an object or a watch event, found without
 * decoding them: the key is located with a native byte search, and one pass over the bytes before it
 * confirms that this occurrence is the member at the expected path (not a key of some other object)
 * and finds where its value ends. Strings and escapes are honoured, so brackets, braces and quotes
 * inside string values cannot mislead it.
 *
 * The returned span `[from, to)` is what to cut so that the rest is still valid JSON: the member
 * together with the comma that separated it from its neighbour. Undefined when the member is absent
 * or the bytes are not laid out as the apiserver writes them (then the caller parses everything).
 */

import * as JsonBytes from './json-bytes.js';
import { endOfString, sameAscii, skipWhitespace } from './json-scanner.js';

// The byte codes are bound here, not read through the import: V8 loads an imported binding at
// every use, and in a per-byte loop that was a fifth of the loop's time (measured: 3.9 against
// 3.2 µs to find the end of a pod's managedFields).
const { CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, isJsonWhitespace, OPEN_BRACE, OPEN_BRACKET, QUOTE } =
  JsonBytes;

const KEY = Buffer.from('"managedFields":');

/** Keys of the objects that enclose `managedFields`, outermost first (the top level has none). */
export const MANAGED_FIELDS_PARENTS = {
  event: ['object', 'metadata'],
  object: ['metadata'],
} as const;

export function managedFieldsSpan(
  bytes: Uint8Array,
  parents: readonly string[],
): [number, number] | undefined {
  const member = findMember(bytes, parents);
  if (member === undefined) return undefined;
  const [at, , valueEnd] = member;
  const before = skipSpaceBack(bytes, at - 1);
  if (bytes[before] === COMMA) return [before, valueEnd];
  const after = skipWhitespace(bytes, valueEnd);
  if (bytes[after] === COMMA) return [at, after + 1];
  return [at, valueEnd];
}

/**
 * Where the value of `metadata.managedFields` is, `[from, to)`: the array (or `null`) itself,
 * without its key. Undefined when {@link managedFieldsSpan} would be.
 */
export function managedFieldsValue(
  bytes: Uint8Array,
  parents: readonly string[],
): [number, number] | undefined {
  const member = findMember(bytes, parents);
  return member === undefined ? undefined : [member[1], member[2]];
}

/**
 * The last answer of {@link findMember}: a watcher that cuts managedFields out of an event and
 * reads its entries asks twice about the same bytes in a row (`drop-managed-fields.ts`,
 * `field-managers.ts`), and finding the member's end is most of the cost of either.
 */
let last:
  { bytes: Uint8Array; parents: readonly string[]; member: [number, number, number] | undefined } | undefined;

/**
 * The member's key position, and its value's start and end. The same view has the same answer:
 * every caller (the decoders, all internal) reads bytes it received and never writes them.
 */
function findMember(bytes: Uint8Array, parents: readonly string[]): [number, number, number] | undefined {
  if (last !== undefined && last.bytes === bytes && last.parents === parents) return last.member;
  const member = locateMember(bytes, parents);
  last = { bytes, parents, member };
  return member;
}

function locateMember(bytes: Uint8Array, parents: readonly string[]): [number, number, number] | undefined {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = buf.indexOf(KEY);
  if (at < 0 || !enclosedBy(bytes, at, parents)) return undefined;
  const valueStart = skipWhitespace(bytes, at + KEY.length);
  const valueEnd = endOfValue(bytes, valueStart);
  return valueEnd < 0 ? undefined : [at, valueStart, valueEnd];
}

/**
 * True when position `at` (outside any string) is directly inside the object reached from the top
 * through `parents`. Each `{` is labelled with the key it is the value of: the last string closed
 * before it, when a colon separates them.
 */
function enclosedBy(bytes: Uint8Array, at: number, parents: readonly string[]): boolean {
  // Per open container: the key's [start, end) for an object that is a member value, else -1.
  const starts: number[] = [];
  const ends: number[] = [];
  let keyStart = -1;
  let keyEnd = -1;
  let colonAfterKey = false;
  for (let i = 0; i < at; i++) {
    const b = bytes[i] as number;
    if (b === QUOTE) {
      const start = i + 1;
      i = endOfString(bytes, start);
      if (i < 0 || i >= at) return false;
      keyStart = start;
      keyEnd = i;
      colonAfterKey = false;
    } else if (b === COLON) {
      colonAfterKey = keyStart >= 0;
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      const labelled = b === OPEN_BRACE && colonAfterKey;
      starts.push(labelled ? keyStart : -1);
      ends.push(labelled ? keyEnd : -1);
      keyStart = -1;
      colonAfterKey = false;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      starts.pop();
      ends.pop();
      keyStart = -1;
      colonAfterKey = false;
    } else if (b === COMMA) {
      keyStart = -1;
      colonAfterKey = false;
    }
  }
  // The top-level object, then one object per parent key.
  if (starts.length !== parents.length + 1 || starts[0] !== -1) return false;
  for (let d = 0; d < parents.length; d++) {
    const start = starts[d + 1] as number;
    if (start < 0 || !sameAscii(bytes, start, ends[d + 1] as number, parents[d] as string)) return false;
  }
  return true;
}

/** Index just past the array, object or `null` starting at `i`, or -1 when it is anything else. */
export function endOfValue(bytes: Uint8Array, i: number): number {
  const first = bytes[i];
  if (first === 0x6e)
    return bytes[i + 1] === 0x75 && bytes[i + 2] === 0x6c && bytes[i + 3] === 0x6c ? i + 4 : -1;
  if (first !== OPEN_BRACKET && first !== OPEN_BRACE) return -1;
  let depth = 0;
  for (; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === QUOTE) {
      i = endOfString(bytes, i + 1);
      if (i < 0) return -1;
    } else if (b === OPEN_BRACKET || b === OPEN_BRACE) depth++;
    else if (b === CLOSE_BRACKET || b === CLOSE_BRACE) {
      if (--depth === 0) return i + 1;
    }
  }
  return -1;
}

function skipSpaceBack(bytes: Uint8Array, i: number): number {
  while (i > 0 && isJsonWhitespace(bytes[i] as number)) i--;
  return i;
}
