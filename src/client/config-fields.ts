/**
 * Hand-rolled field readers for kubeconfig documents. Every failure is a {@link ConfigError}
 * naming the file and the field path (`users[1].user.client-key`), so a user can find the line.
 */
import { appendConfigPath } from '../errors/config-path.js';
import { ConfigError } from '../errors/raven-error.js';

/** Where a value sits: the file it came from and its field path inside that file. */
export interface FieldLocation {
  file: string;
  path: string;
}

/** A location one step deeper: `at(loc, 'cluster')`, `at(loc, 0)`. */
export function at(loc: FieldLocation, key: string | number): FieldLocation {
  return { file: loc.file, path: appendConfigPath(loc.path, key) };
}

/** A ConfigError located at `loc`. */
export function fieldError(loc: FieldLocation, message: string, cause?: unknown): ConfigError {
  return new ConfigError(message, { file: loc.file, path: loc.path, cause });
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a mapping' : `${typeof value} ${JSON.stringify(value)}`;
}

/** The value as a mapping; absent (`undefined`/`null`) becomes an empty mapping. */
export function readObject(value: unknown, loc: FieldLocation): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw fieldError(loc, `expected a mapping, got ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

/** The value as a list; absent becomes an empty list. */
export function readArray(value: unknown, loc: FieldLocation): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw fieldError(loc, `expected a list, got ${describe(value)}`);
  return value;
}

/** An optional string field; the empty string counts as absent, as it does for kubectl. */
export function readString(
  obj: Record<string, unknown>,
  key: string,
  loc: FieldLocation,
): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw fieldError(at(loc, key), `expected a string, got ${describe(value)}`);
  return value;
}

/** An optional boolean field. */
export function readBoolean(
  obj: Record<string, unknown>,
  key: string,
  loc: FieldLocation,
): boolean | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') {
    throw fieldError(at(loc, key), `expected true or false, got ${describe(value)}`);
  }
  return value;
}

/** An optional list of strings. */
export function readStringArray(obj: Record<string, unknown>, key: string, loc: FieldLocation): string[] {
  const here = at(loc, key);
  return readArray(obj[key], here).map((item, i) => {
    if (typeof item !== 'string') throw fieldError(at(here, i), `expected a string, got ${describe(item)}`);
    return item;
  });
}

/** An optional `*-data` field: base64, decoded to UTF-8 text (PEM). */
export function readBase64(
  obj: Record<string, unknown>,
  key: string,
  loc: FieldLocation,
): string | undefined {
  const value = readString(obj, key, loc);
  if (value === undefined) return undefined;
  const compact = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
    throw fieldError(at(loc, key), 'is not valid base64');
  }
  return Buffer.from(compact, 'base64').toString('utf8');
}
