/**
 * Every decision about what an error means lives here, so that no other module compares status
 * codes or reasons. Each predicate accepts `unknown` and answers false for anything else.
 */
import { ApiError } from './api-error.js';
import { AuthError, DecodeError, RavenError, SinkError, TransportError } from './raven-error.js';

function statusCodeOf(err: unknown): number | undefined {
  return err instanceof ApiError ? err.statusCode : undefined;
}

/** 410 Gone / reason Expired: the resourceVersion (or continue token) is too old; relist. */
export function isExpired(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  return err.statusCode === 410 || err.reason === 'Expired' || err.reason === 'Gone';
}

/** 401: the credentials were rejected; refresh them (re-run an exec plugin, re-read a token file). */
export function isUnauthorized(err: unknown): boolean {
  return statusCodeOf(err) === 401;
}

/** 403: the credentials lack permission (missing RBAC). */
export function isForbidden(err: unknown): boolean {
  return statusCodeOf(err) === 403;
}

export function isNotFound(err: unknown): boolean {
  return statusCodeOf(err) === 404;
}

export function isConflict(err: unknown): boolean {
  return statusCodeOf(err) === 409;
}

export function isAlreadyExists(err: unknown): boolean {
  return err instanceof ApiError && err.statusCode === 409 && err.reason === 'AlreadyExists';
}

/** 429: slow down, honouring Retry-After. */
export function isTooManyRequests(err: unknown): boolean {
  return statusCodeOf(err) === 429;
}

/** The apiserver rejected the request as invalid: retrying the same request cannot succeed. */
export function isInvalid(err: unknown): boolean {
  const code = statusCodeOf(err);
  return code === 400 || code === 422 || code === 415 || code === 406 || code === 405;
}

/**
 * Worth retrying the same request later: network failures, 429, 5xx and server timeouts.
 * Not: 4xx answers (except 429), decode errors of a complete answer, config errors.
 */
export function isRetryable(err: unknown): boolean {
  if (err instanceof TransportError) return true;
  if (err instanceof SinkError) return err.retryable;
  if (err instanceof ApiError) {
    const code = err.statusCode;
    return code === 429 || code >= 500 || err.reason === 'Timeout' || err.reason === 'ServerTimeout';
  }
  return false;
}

/** A watch stream that died mid-way (reset, malformed frame): resume or relist, never give up. */
export function isStreamBroken(err: unknown): boolean {
  return err instanceof TransportError || err instanceof DecodeError;
}

/** Credentials could not be produced at all (plugin missing, token file unreadable). */
export function isAuthSetupError(err: unknown): boolean {
  return err instanceof AuthError;
}

/** Seconds to wait before retrying, when the server said so. */
export function retryAfterSeconds(err: unknown): number | undefined {
  return err instanceof ApiError ? err.retryAfterSeconds : undefined;
}

/** A short, stable label for metrics and status: `api:410`, `transport`, `decode`, ... */
export function errorKind(err: unknown): string {
  if (err instanceof ApiError) return `api:${err.statusCode}`;
  if (err instanceof RavenError) return err.code.replace(/^ERR_/, '').toLowerCase();
  return 'unknown';
}
