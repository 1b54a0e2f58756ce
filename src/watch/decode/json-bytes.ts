/**
 * The character codes of JSON's structure, for the scanners that walk JSON bytes or text without
 * parsing it (`json-scanner.ts`, `list-scanner.ts`, `managed-fields-span.ts`).
 */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;

/** Whether `code` is JSON whitespace: space, line feed, carriage return or tab. */
export function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}
