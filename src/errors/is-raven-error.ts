/**
 * `instanceof`-free checks for Raven's errors. They read the brand every {@link RavenError}
 * carries (`Symbol.for('kube-raven.error')`) and its `code`, so they answer the same for an error
 * thrown by another copy of the package in the same process, where `instanceof` answers false.
 */
import type { ApiError } from './api-error.js';
import type { RavenErrorCode } from './error-codes.js';
import type { OpenStackError } from './openstack-error.js';
import {
  RAVEN_ERROR_BRAND,
  type AuthError,
  type ConfigError,
  type DecodeError,
  type RavenError,
  type SinkError,
  type TransportError,
} from './raven-error.js';

/** The class an error with a given code is, where the code belongs to one class in `errors/`. */
export interface RavenErrorByCode {
  ERR_API: ApiError;
  ERR_AUTH: AuthError;
  ERR_CONFIG: ConfigError;
  ERR_DECODE: DecodeError;
  ERR_OPENSTACK: OpenStackError;
  ERR_SINK: SinkError;
  ERR_TRANSPORT: TransportError;
}

/** What `isRavenError(err, code)` narrows `err` to. */
export type RavenErrorWithCode<C extends RavenErrorCode> = C extends keyof RavenErrorByCode
  ? RavenErrorByCode[C]
  : RavenError & { readonly code: C };

/**
 * Whether `err` is an error Raven raised (from any copy of the package), and, given a `code`,
 * whether it carries that code.
 *
 * @example
 * try {
 *   await pods.get('web-0', { namespace: 'shop' });
 * } catch (err) {
 *   if (isRavenError(err, 'ERR_API') && err.statusCode === 404) console.log('no such pod');
 *   else throw err;
 * }
 */
export function isRavenError(err: unknown): err is RavenError;
export function isRavenError<C extends RavenErrorCode>(err: unknown, code: C): err is RavenErrorWithCode<C>;
export function isRavenError(err: unknown, code?: RavenErrorCode): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const branded = err as { [RAVEN_ERROR_BRAND]?: unknown; code?: unknown };
  if (branded[RAVEN_ERROR_BRAND] !== true || typeof branded.code !== 'string') return false;
  return code === undefined || branded.code === code;
}
