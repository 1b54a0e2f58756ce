/**
 * The registry of error codes: every `code` a {@link RavenError} can carry, and nothing else.
 * A code is part of the public API: once released it keeps its meaning, and a new failure that
 * callers would act on differently gets a new code here (and a row in `docs/errors.md`, which a
 * unit test keeps equal to this list).
 */

/**
 * Every error code, sorted. The `RavenError` constructor accepts only these, so a code cannot be
 * invented at a throw site.
 */
export const RAVEN_ERROR_CODES = [
  'ERR_ADDRESS_IN_USE',
  'ERR_API',
  'ERR_AUTH',
  'ERR_CHECKPOINT_CLOSED',
  'ERR_CHECKPOINT_FENCED',
  'ERR_CHECKPOINT_LOCKED',
  'ERR_CHECKPOINT_SCHEMA',
  'ERR_CHECKPOINT_UNREADABLE',
  'ERR_CHECKPOINT_WRITE',
  'ERR_CLOSED',
  'ERR_CONFIG',
  'ERR_DECODE',
  'ERR_INVALID_ARGUMENT',
  'ERR_INVALID_INDEX',
  'ERR_INVALID_OBJECT_KEY',
  'ERR_INVALID_STATE',
  'ERR_NOT_STARTED',
  'ERR_OPENSTACK',
  'ERR_REDACTION_KEY',
  'ERR_SINK',
  'ERR_TRANSPORT',
  'ERR_UNKNOWN_INDEX',
  'ERR_UNKNOWN_RESOURCE',
  'ERR_USAGE',
] as const;

/** One of {@link RAVEN_ERROR_CODES}. */
export type RavenErrorCode = (typeof RAVEN_ERROR_CODES)[number];

const known: ReadonlySet<string> = new Set(RAVEN_ERROR_CODES);

/**
 * Whether `value` is a code from the registry.
 *
 * @example
 * isRavenErrorCode('ERR_API'); // true
 * isRavenErrorCode('ECONNRESET'); // false
 */
export function isRavenErrorCode(value: unknown): value is RavenErrorCode {
  return typeof value === 'string' && known.has(value);
}
