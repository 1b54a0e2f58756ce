/**
 * A small structural scanner over the UTF-8 bytes of JSON, for looking at a few members of a large
 * document without decoding or parsing it. It walks objects member by member and skips values by
 * matching brackets, aware of strings and escapes, so a key that appears inside a string or a
 * nested object is never mistaken for the member being looked for. It works on the bytes as they
 * came from the socket: every structural character is ASCII, and no byte of a multi-byte UTF-8
 * character is, so no character needs decoding to be stepped over.
 *
 * Contract: the scanner validates only the structure it walks. Every function answers
 * {@link MALFORMED} (or undefined) when the bytes do not look as expected; callers then fall back
 * to a full `JSON.parse`, which reports the real error. Duplicate keys are assumed absent (the
 * apiserver never emits them); where `JSON.parse` keeps the last, the scanner sees the first.
 */

import { utf8 } from './bytes.js';
import * as JsonBytes from './json-bytes.js';

// The byte codes are bound here, not read through the import: V8 loads an imported binding at
// every use, and in a per-byte loop that was a fifth of the loop's time (measured: 3.9 against
// 3.2 µs to find the end of a pod's managedFields).
const { BACKSLASH, isJsonWhitespace, QUOTE } = JsonBytes;

/** Returned when the bytes are not well-formed where the scanner looked. */
export const MALFORMED = -1;
/** Returned by {@link scanObject} when the visitor stopped the scan early. */
export const STOPPED = -2;
/**
 * Returned when the bytes ended before what the scanner was reading did: well-formed so far, and
 * cut, as a prefix of a longer document is. Callers reading whole documents treat it as {@link MALFORMED}.
 */
export const CUT = -3;

/** Whether a scan's answer is {@link MALFORMED} or {@link CUT}: it did not find an end. */
export function failed(end: number): boolean {
  return end === MALFORMED || end === CUT;
}

/** Index of the first non-whitespace byte at or after `i`. */
export function skipWhitespace(b: Uint8Array, i: number): number {
  while (i < b.length && isJsonWhitespace(b[i] as number)) i++;
  return i;
}

/** Index of the closing quote of the string whose content starts at `b[i]`, or -1 when it does not end. */
export function endOfString(b: Uint8Array, i: number): number {
  for (; i < b.length; i++) {
    const c = b[i];
    if (c === QUOTE) return i;
    if (c === BACKSLASH) i++;
  }
  return -1;
}

/** `b[i]` is an opening quote; the index just past the closing quote, or CUT. */
export function skipString(b: Uint8Array, i: number): number {
  const close = endOfString(b, i + 1);
  return close < 0 ? CUT : close + 1;
}

/**
 * Skip the value starting at `i` (no leading whitespace): the index just past it, MALFORMED, or
 * CUT. A number or literal running to the end of the bytes is taken as ending there.
 */
export function skipValue(b: Uint8Array, i: number): number {
  if (i >= b.length) return CUT;
  const c = b[i];
  if (c === QUOTE) return skipString(b, i);
  if (c === 0x7b || c === 0x5b) return skipContainer(b, i);
  let j = i;
  while (j < b.length) {
    const d = b[j];
    // Scalars (numbers, true, false, null) end at a delimiter or whitespace.
    if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
    if (d === QUOTE || d === 0x7b || d === 0x5b || d === 0x3a) return MALFORMED;
    j++;
  }
  return j === i ? MALFORMED : j;
}

/** `b[i]` opens an object or array; the index just past its matching close, MALFORMED, or CUT. */
function skipContainer(b: Uint8Array, i: number): number {
  const stack: number[] = [];
  let j = i;
  while (j < b.length) {
    const c = b[j] as number;
    if (c === QUOTE) {
      j = skipString(b, j);
      if (j < 0) return j;
      continue;
    }
    if (c === 0x7b || c === 0x5b) {
      stack.push(c + 2); // '{' + 2 === '}', '[' + 2 === ']'
    } else if (c === 0x7d || c === 0x5d) {
      if (stack.pop() !== c) return MALFORMED;
      if (stack.length === 0) return j + 1;
    }
    j++;
  }
  return CUT;
}

/**
 * The string value of the JSON string spanning `[start, end)` (quotes included), or undefined when
 * it is not a valid string. Strings without escapes are decoded as they are, not parsed.
 */
export function readString(b: Uint8Array, start: number, end: number): string | undefined {
  if (end < 0) return undefined;
  if (!hasEscape(b, start, end)) return utf8(b, end - 1, start + 1);
  try {
    const value: unknown = JSON.parse(utf8(b, end, start));
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The string value starting at `b[i]`, or undefined when no valid string starts there. */
export function readStringAt(b: Uint8Array, i: number): string | undefined {
  return b[i] === QUOTE ? readString(b, i, skipString(b, i)) : undefined;
}

/** One member of an object, as positions in the bytes. The value's end is found only when needed. */
export interface Member {
  key: string;
  keyStart: number;
  valueStart: number;
  /** Index of the comma before this member, or -1 for the first member. */
  commaBefore: number;
}

/**
 * Visit the members of the object opening at `b[start]` in order, until `visit` returns false.
 * Answers the index just past the closing brace, {@link STOPPED}, {@link MALFORMED} or {@link CUT}. A value is
 * skipped only after its visit, so a visitor that stops at a member never pays for scanning it.
 *
 * @example
 * let kind: string | undefined;
 * scanObject(bytes, 0, (m) => {
 *   if (m.key === 'kind') kind = readStringAt(bytes, m.valueStart);
 *   return kind === undefined;
 * });
 */
export function scanObject(b: Uint8Array, start: number, visit: (member: Member) => boolean): number {
  let badKey = false as boolean;
  const end = walkObject(b, start, (keyStart, keyEnd, valueStart, commaBefore) => {
    const key = readString(b, keyStart, keyEnd);
    if (key === undefined) {
      badKey = true;
      return false;
    }
    return visit({ key, keyStart, valueStart, commaBefore });
  });
  return badKey ? MALFORMED : end;
}

/** Where a byte is wanted at `b[i]` and is not there: CUT when the bytes have ended, else MALFORMED. */
function badAt(b: Uint8Array, i: number): number {
  return i >= b.length ? CUT : MALFORMED;
}

/**
 * {@link scanObject} without making anything per member: `visit` gets the key's span
 * `[keyStart, keyEnd)` (its quotes included; compare it with {@link keyIs}) and where the value
 * starts. For scans that look at a few members of many lines, where a key string and a member
 * object each time cost more than the walk.
 */
export function walkObject(
  b: Uint8Array,
  start: number,
  visit: (keyStart: number, keyEnd: number, valueStart: number, commaBefore: number) => boolean,
): number {
  if (b[start] !== 0x7b) return badAt(b, start);
  let i = skipWhitespace(b, start + 1);
  if (b[i] === 0x7d) return i + 1;
  let commaBefore = -1;
  for (;;) {
    if (b[i] !== QUOTE) return badAt(b, i);
    const keyStart = i;
    const keyEnd = skipString(b, i);
    if (keyEnd < 0) return keyEnd;
    i = skipWhitespace(b, keyEnd);
    if (b[i] !== 0x3a) return badAt(b, i);
    const valueStart = skipWhitespace(b, i + 1);
    // A visitor is shown only a value that has begun: one cut before it would read as absent.
    if (valueStart >= b.length) return CUT;
    if (!visit(keyStart, keyEnd, valueStart, commaBefore)) return STOPPED;
    const valueEnd = skipValue(b, valueStart);
    if (valueEnd < 0) return valueEnd;
    i = skipWhitespace(b, valueEnd);
    const c = b[i];
    if (c === 0x7d) return i + 1;
    if (c !== 0x2c) return badAt(b, i);
    commaBefore = i;
    i = skipWhitespace(b, i + 1);
  }
}

/** Whether `b[start, end)` holds exactly the ASCII text `text`. */
export function sameAscii(b: Uint8Array, start: number, end: number, text: string): boolean {
  if (end - start !== text.length) return false;
  for (let i = 0; i < text.length; i++) if (b[start + i] !== text.charCodeAt(i)) return false;
  return true;
}

/**
 * Whether the key spanning `[keyStart, keyEnd)` (quotes included) is `name` (ASCII), without
 * making the key's string when it is written plainly. A key written with escapes (always longer
 * than what it decodes to; the apiserver writes none) is decoded to be compared.
 */
export function keyIs(b: Uint8Array, keyStart: number, keyEnd: number, name: string): boolean {
  const length = keyEnd - keyStart;
  if (length === name.length + 2) return sameAscii(b, keyStart + 1, keyEnd - 1, name);
  return (
    length > name.length + 2 && hasEscape(b, keyStart, keyEnd) && readString(b, keyStart, keyEnd) === name
  );
}

/** Whether the string spanning `[start, end)` (quotes included) holds a backslash escape. */
export function hasEscape(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start + 1; i < end - 1; i++) if (b[i] === BACKSLASH) return true;
  return false;
}
