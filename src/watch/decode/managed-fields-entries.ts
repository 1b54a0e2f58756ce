/**
 * The entries of a `metadata.managedFields` array, read from the raw JSON bytes without parsing
 * them: for each entry, where the values of `manager`, `operation`, `subresource`, `time` and
 * `fieldsV1` are. Strings are given as the bytes between their quotes (escapes left as written),
 * `fieldsV1` as the bytes of the whole object. Other members (`apiVersion`, `fieldsType`) are
 * stepped over.
 *
 * Contract: false when the bytes are not an array of objects laid out as JSON; nothing is
 * decoded, so a caller that needs a value decodes its span (a few bytes) itself.
 */
import * as JsonBytes from './json-bytes.js';
import { endOfString, sameAscii, skipWhitespace } from './json-scanner.js';
import { endOfValue } from './managed-fields-span.js';

// The byte codes are bound here, not read through the import: V8 loads an imported binding at
// every use, and in a per-byte loop that was a fifth of the loop's time (measured: 3.9 against
// 3.2 µs to find the end of a pod's managedFields).
const { CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } = JsonBytes;

/** Where one entry's members are: `[start, end)` pairs, -1 when the member is absent. */
export interface EntrySpans {
  managerStart: number;
  managerEnd: number;
  operationStart: number;
  operationEnd: number;
  subresourceStart: number;
  subresourceEnd: number;
  timeStart: number;
  timeEnd: number;
  fieldsStart: number;
  fieldsEnd: number;
}

function emptySpans(): EntrySpans {
  return {
    managerStart: -1,
    managerEnd: -1,
    operationStart: -1,
    operationEnd: -1,
    subresourceStart: -1,
    subresourceEnd: -1,
    timeStart: -1,
    timeEnd: -1,
    fieldsStart: -1,
    fieldsEnd: -1,
  };
}

/**
 * The entries of the array at `bytes[from, to)` (as `managedFieldsValue` finds it), in order;
 * undefined when the bytes are not as expected. `null` is an empty list.
 */
export function managedFieldsEntries(bytes: Uint8Array, from: number, to: number): EntrySpans[] | undefined {
  const entries: EntrySpans[] = [];
  let i = skipWhitespace(bytes, from);
  if (bytes[i] === 0x6e) return entries; // null
  if (bytes[i] !== OPEN_BRACKET) return undefined;
  i = skipWhitespace(bytes, i + 1);
  if (bytes[i] === CLOSE_BRACKET) return entries;
  while (i < to) {
    if (bytes[i] !== OPEN_BRACE) return undefined;
    const entry = emptySpans();
    i = members(bytes, i + 1, entry);
    if (i < 0) return undefined;
    entries.push(entry);
    i = skipWhitespace(bytes, i);
    if (bytes[i] === CLOSE_BRACKET) return entries;
    if (bytes[i] !== COMMA) return undefined;
    i = skipWhitespace(bytes, i + 1);
  }
  return undefined;
}

/** Read the members of the object whose `{` is just before `i`; the index past its `}`, or -1. */
function members(bytes: Uint8Array, i: number, entry: EntrySpans): number {
  i = skipWhitespace(bytes, i);
  if (bytes[i] === CLOSE_BRACE) return i + 1;
  for (;;) {
    if (bytes[i] !== QUOTE) return -1;
    const keyStart = i + 1;
    const keyEnd = endOfString(bytes, keyStart);
    if (keyEnd < 0) return -1;
    i = skipWhitespace(bytes, keyEnd + 1);
    if (bytes[i] !== COLON) return -1;
    i = skipWhitespace(bytes, i + 1);
    const first = bytes[i];
    let valueEnd: number;
    if (first === QUOTE) {
      const end = endOfString(bytes, i + 1);
      if (end < 0) return -1;
      record(bytes, keyStart, keyEnd, i + 1, end, entry);
      valueEnd = end + 1;
    } else if (first === OPEN_BRACE || first === OPEN_BRACKET) {
      valueEnd = endOfValue(bytes, i);
      if (valueEnd < 0) return -1;
      if (sameAscii(bytes, keyStart, keyEnd, 'fieldsV1')) {
        entry.fieldsStart = i;
        entry.fieldsEnd = valueEnd;
      }
    } else {
      valueEnd = endOfScalar(bytes, i);
    }
    i = skipWhitespace(bytes, valueEnd);
    if (bytes[i] === CLOSE_BRACE) return i + 1;
    if (bytes[i] !== COMMA) return -1;
    i = skipWhitespace(bytes, i + 1);
  }
}

function record(
  bytes: Uint8Array,
  keyStart: number,
  keyEnd: number,
  start: number,
  end: number,
  entry: EntrySpans,
): void {
  switch (keyEnd - keyStart) {
    case 4:
      if (sameAscii(bytes, keyStart, keyEnd, 'time')) {
        entry.timeStart = start;
        entry.timeEnd = end;
      }
      break;
    case 7:
      if (sameAscii(bytes, keyStart, keyEnd, 'manager')) {
        entry.managerStart = start;
        entry.managerEnd = end;
      }
      break;
    case 9:
      if (sameAscii(bytes, keyStart, keyEnd, 'operation')) {
        entry.operationStart = start;
        entry.operationEnd = end;
      }
      break;
    case 11:
      if (sameAscii(bytes, keyStart, keyEnd, 'subresource')) {
        entry.subresourceStart = start;
        entry.subresourceEnd = end;
      }
      break;
  }
}

/** Past a number, `true`, `false` or `null`: the next delimiter or whitespace. */
function endOfScalar(bytes: Uint8Array, i: number): number {
  for (; i < bytes.length; i++) {
    const b = bytes[i];
    if (
      b === COMMA ||
      b === CLOSE_BRACE ||
      b === CLOSE_BRACKET ||
      b === 0x20 ||
      b === 0x0a ||
      b === 0x0d ||
      b === 0x09
    )
      return i;
  }
  return i;
}
