/**
 * A small structural scanner over JSON text, for looking at a few members of a large document
 * without parsing it. It walks objects member by member and skips values by matching brackets,
 * aware of strings and escapes, so a key that appears inside a string or a nested object is never
 * mistaken for the member being looked for.
 *
 * Contract: the scanner validates only the structure it walks. Every function answers
 * {@link MALFORMED} (or undefined) when the text does not look as expected; callers then fall back
 * to a full `JSON.parse`, which reports the real error. Duplicate keys are assumed absent (the
 * apiserver never emits them); where `JSON.parse` keeps the last, the scanner sees the first.
 */

import { BACKSLASH, isJsonWhitespace, QUOTE } from './json-bytes.js';

/** Returned when the text is not well-formed where the scanner looked. */
export const MALFORMED = -1;
/** Returned by {@link scanObject} when the visitor stopped the scan early. */
export const STOPPED = -2;
/**
 * Returned when the text ended before what the scanner was reading did: well-formed so far, and
 * cut, as a prefix of a longer text is. Callers reading whole texts treat it as {@link MALFORMED}.
 */
export const CUT = -3;

/** Whether a scan's answer is {@link MALFORMED} or {@link CUT}: it did not find an end. */
export function failed(end: number): boolean {
  return end === MALFORMED || end === CUT;
}

/** Index of the first non-whitespace character at or after `i`. */
export function skipWhitespace(s: string, i: number): number {
  while (i < s.length) {
    if (!isJsonWhitespace(s.charCodeAt(i))) break;
    i++;
  }
  return i;
}

/** `s[i]` is an opening quote; the index just past the closing quote, or CUT. */
export function skipString(s: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const quote = s.indexOf('"', from);
    if (quote < 0) return CUT;
    let backslashes = 0;
    while (s.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/**
 * Skip the value starting at `i` (no leading whitespace): the index just past it, MALFORMED, or
 * CUT. A number or literal running to the end of the text is taken as ending there.
 */
export function skipValue(s: string, i: number): number {
  if (i >= s.length) return CUT;
  const c = s.charCodeAt(i);
  if (c === QUOTE) return skipString(s, i);
  if (c === 0x7b || c === 0x5b) return skipContainer(s, i);
  let j = i;
  while (j < s.length) {
    const d = s.charCodeAt(j);
    // Scalars (numbers, true, false, null) end at a delimiter or whitespace.
    if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
    if (d === QUOTE || d === 0x7b || d === 0x5b || d === 0x3a) return MALFORMED;
    j++;
  }
  return j === i ? MALFORMED : j;
}

/** `s[i]` opens an object or array; the index just past its matching close, MALFORMED, or CUT. */
function skipContainer(s: string, i: number): number {
  const stack: number[] = [];
  let j = i;
  while (j < s.length) {
    const c = s.charCodeAt(j);
    if (c === QUOTE) {
      j = skipString(s, j);
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
 * The string value of the JSON string spanning `[start, end)`, or undefined when it is not a
 * valid string. Strings without escapes are sliced, not parsed.
 */
export function readString(s: string, start: number, end: number): string | undefined {
  if (end < 0) return undefined;
  const inner = s.slice(start + 1, end - 1);
  if (!inner.includes('\\')) return inner;
  try {
    const value: unknown = JSON.parse(s.slice(start, end));
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The string value starting at `s[i]`, or undefined when no valid string starts there. */
export function readStringAt(s: string, i: number): string | undefined {
  return s.charCodeAt(i) === QUOTE ? readString(s, i, skipString(s, i)) : undefined;
}

/** One member of an object, as positions in the text. The value's end is found only when needed. */
export interface Member {
  key: string;
  keyStart: number;
  valueStart: number;
  /** Index of the comma before this member, or -1 for the first member. */
  commaBefore: number;
}

/**
 * Visit the members of the object opening at `s[start]` in order, until `visit` returns false.
 * Answers the index just past the closing brace, {@link STOPPED}, {@link MALFORMED} or {@link CUT}. A value is
 * skipped only after its visit, so a visitor that stops at a member never pays for scanning it.
 *
 * @example
 * let kind: string | undefined;
 * scanObject(text, 0, (m) => {
 *   if (m.key === 'kind') kind = readString(text, m.valueStart, skipValue(text, m.valueStart));
 *   return kind === undefined;
 * });
 */
export function scanObject(s: string, start: number, visit: (member: Member) => boolean): number {
  let badKey = false as boolean;
  const end = walkObject(s, start, (keyStart, keyEnd, valueStart, commaBefore) => {
    const key = readString(s, keyStart, keyEnd);
    if (key === undefined) {
      badKey = true;
      return false;
    }
    return visit({ key, keyStart, valueStart, commaBefore });
  });
  return badKey ? MALFORMED : end;
}

/** Where a character is wanted at `s[i]` and is not there: CUT when the text has ended, else MALFORMED. */
function badAt(s: string, i: number): number {
  return i >= s.length ? CUT : MALFORMED;
}

/**
 * {@link scanObject} without making anything per member: `visit` gets the key's span
 * `[keyStart, keyEnd)` (its quotes included; compare it with {@link keyIs}) and where the value
 * starts. For scans that look at a few members of many lines, where a key string and a member
 * object each time cost more than the walk.
 */
export function walkObject(
  s: string,
  start: number,
  visit: (keyStart: number, keyEnd: number, valueStart: number, commaBefore: number) => boolean,
): number {
  if (s.charCodeAt(start) !== 0x7b) return badAt(s, start);
  let i = skipWhitespace(s, start + 1);
  if (s.charCodeAt(i) === 0x7d) return i + 1;
  let commaBefore = -1;
  for (;;) {
    if (s.charCodeAt(i) !== QUOTE) return badAt(s, i);
    const keyStart = i;
    const keyEnd = skipString(s, i);
    if (keyEnd < 0) return keyEnd;
    i = skipWhitespace(s, keyEnd);
    if (s.charCodeAt(i) !== 0x3a) return badAt(s, i);
    const valueStart = skipWhitespace(s, i + 1);
    // A visitor is shown only a value that has begun: one cut before it would read as absent.
    if (valueStart >= s.length) return CUT;
    if (!visit(keyStart, keyEnd, valueStart, commaBefore)) return STOPPED;
    const valueEnd = skipValue(s, valueStart);
    if (valueEnd < 0) return valueEnd;
    i = skipWhitespace(s, valueEnd);
    const c = s.charCodeAt(i);
    if (c === 0x7d) return i + 1;
    if (c !== 0x2c) return badAt(s, i);
    commaBefore = i;
    i = skipWhitespace(s, i + 1);
  }
}

/**
 * Whether the key spanning `[keyStart, keyEnd)` (quotes included) is `name`, without making the
 * key's string when it is written plainly. A key written with escapes (always longer than what it
 * decodes to; the apiserver writes none) is decoded to be compared.
 */
export function keyIs(s: string, keyStart: number, keyEnd: number, name: string): boolean {
  const length = keyEnd - keyStart;
  if (length === name.length + 2) return s.startsWith(name, keyStart + 1);
  return (
    length > name.length + 2 && hasEscape(s, keyStart, keyEnd) && readString(s, keyStart, keyEnd) === name
  );
}

/** Whether the string spanning `[start, end)` (quotes included) holds a backslash escape. */
export function hasEscape(s: string, start: number, end: number): boolean {
  for (let i = start + 1; i < end - 1; i++) if (s.charCodeAt(i) === BACKSLASH) return true;
  return false;
}
