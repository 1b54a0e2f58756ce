/**
 * Every decision about what an error means lives here, so that no other module compares status
 * codes or reasons. Each predicate accepts `unknown` and answers false for anything else. They
 * recognise Raven's errors by brand and code (`isRavenError`), not `instanceof`, so an error from
 * another copy of the package is classified the same.
 */
import type { OpenStackError, OpenStackProvisioningError } from './openstack-error.js';
import { isRavenError } from './is-raven-error.js';

/** A load balancer's failed wait: the one OpenStack error with a `provisioningStatus`. */
function isProvisioningError(err: unknown): err is OpenStackProvisioningError {
  return isRavenError(err, 'ERR_OPENSTACK') && 'provisioningStatus' in err;
}

/**
 * The HTTP status of an answer from any API Raven calls: the Kubernetes apiserver or an OpenStack
 * service. The status predicates below (not found, conflict, unauthorized, ...) hold for both.
 */
function statusCodeOf(err: unknown): number | undefined {
  if (isRavenError(err, 'ERR_API')) return err.statusCode;
  if (isRavenError(err, 'ERR_OPENSTACK')) return err.status;
  return undefined;
}

/** 410 Gone / reason Expired: the resourceVersion (or continue token) is too old; relist. */
export function isExpired(err: unknown): boolean {
  if (!isRavenError(err, 'ERR_API')) return false;
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
  return isRavenError(err, 'ERR_API') && err.statusCode === 409 && err.reason === 'AlreadyExists';
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
  if (isRavenError(err, 'ERR_TRANSPORT')) return true;
  if (isRavenError(err, 'ERR_SINK')) return err.retryable;
  if (isRavenError(err, 'ERR_OPENSTACK')) return isOpenStackRetryable(err);
  if (isRavenError(err, 'ERR_API')) {
    const code = err.statusCode;
    return code === 429 || code >= 500 || err.reason === 'Timeout' || err.reason === 'ServerTimeout';
  }
  return false;
}

/**
 * What a failed list or watch means to a consumer that cannot change the request (the CLI):
 *
 * - `transient`: retrying heals it — no connection, a broken stream, 5xx, 429, 410 (relist),
 *   server timeouts, a refused streaming initial list (the watcher falls back to list+watch).
 *   Anything not recognised below is treated as transient, as the watcher does.
 * - `invalid`: the server rejected the request itself (400, 422, 405, and any other 4xx not named
 *   here), e.g. a field selector it does not support. The same request fails again.
 * - `unauthorized`: 401. It reaches a watcher only after the client has already re-authenticated
 *   once (`KubeClient` refreshes credentials on a 401), so the credentials cannot be refreshed;
 *   likewise when they cannot be produced at all (exec plugin or token file failing).
 * - `forbidden`: 403, missing RBAC. Permanent unless someone grants it, which may be awaited.
 * - `not-found`: 404 on the collection: the resource may no longer be served (a deleted CRD), or
 *   may not be served yet (a CRD not yet established). Ask discovery before giving up.
 */
export type WatchFailure = 'transient' | 'invalid' | 'unauthorized' | 'forbidden' | 'not-found';

export function watchFailure(err: unknown): WatchFailure {
  if (isRavenError(err, 'ERR_AUTH')) return 'unauthorized';
  if (!isRavenError(err, 'ERR_API') || isExpired(err) || isRetryable(err)) return 'transient';
  const code = err.statusCode;
  if (code === 401) return 'unauthorized';
  if (code === 403) return 'forbidden';
  if (code === 404) return 'not-found';
  // 408 Request Timeout: the server gave up waiting, not on the request.
  if (code >= 400 && code < 500 && code !== 408) return 'invalid';
  return 'transient';
}

/** A watch stream that died mid-way (reset, malformed frame): resume or relist, never give up. */
export function isStreamBroken(err: unknown): boolean {
  return isRavenError(err, 'ERR_TRANSPORT') || isRavenError(err, 'ERR_DECODE');
}

/**
 * The failure happened below HTTP: the connection was refused, reset, timed out or found dead, so
 * no answer came back. Worth retrying at once or nearly so: nothing reached the server's handlers.
 */
export function isConnectionFailure(err: unknown): boolean {
  return isRavenError(err, 'ERR_TRANSPORT');
}

/** The TLS certificate codes Node reports when a peer's certificate does not verify. */
const CERTIFICATE_CODES = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * A TLS peer's certificate did not verify (untrusted, expired, wrong name): a retry cannot fix
 * it until someone changes the certificate or the trusted CAs.
 */
export function isCertificateError(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && CERTIFICATE_CODES.has(code);
}

/** Credentials could not be produced at all (plugin missing, token file unreadable). */
export function isAuthSetupError(err: unknown): boolean {
  return isRavenError(err, 'ERR_AUTH');
}

/** Seconds to wait before retrying, when the server said so. */
export function retryAfterSeconds(err: unknown): number | undefined {
  return isRavenError(err, 'ERR_API') ? err.retryAfterSeconds : undefined;
}

/** A short, stable label for metrics and status: `api:410`, `transport`, `decode`, ... */
export function errorKind(err: unknown): string {
  if (isRavenError(err, 'ERR_API')) return `api:${err.statusCode}`;
  if (isProvisioningError(err)) return 'openstack:provisioning';
  if (isRavenError(err, 'ERR_OPENSTACK')) return `openstack:${err.status ?? 'transport'}`;
  if (isRavenError(err)) return err.code.replace(/^ERR_/, '').toLowerCase();
  return 'unknown';
}

function isOpenStackRetryable(err: OpenStackError): boolean {
  if (isProvisioningError(err)) return err.timedOut;
  const code = err.status;
  return code === undefined || code === 429 || (code >= 500 && code !== 501);
}

/**
 * Octavia refused a change because the load balancer is in a PENDING_* state (409 "... is
 * immutable and cannot be updated"): wait for ACTIVE and try again.
 */
export function isOpenStackImmutable(err: unknown): boolean {
  return (
    isRavenError(err, 'ERR_OPENSTACK') &&
    err.status === 409 &&
    err.service === 'load-balancer' &&
    /immutable/i.test(err.fault.message ?? '')
  );
}

/**
 * A quota is exhausted: Neutron 409 `OverQuota`, Octavia 403 "Quota has been met", or 413.
 * Retrying cannot help until something is deleted or the quota is raised.
 */
export function isOpenStackOverQuota(err: unknown): boolean {
  if (!isRavenError(err, 'ERR_OPENSTACK') || err.status === undefined) return false;
  if (err.status === 413) return true;
  if (err.status !== 403 && err.status !== 409) return false;
  const type = err.fault.type ?? '';
  return /quota|overlimit/i.test(type) || /quota/i.test(err.fault.message ?? '');
}

/** The service could not be reached or said it is unavailable (no answer, 502, 503, 504). */
export function isOpenStackUnavailable(err: unknown): boolean {
  if (!isRavenError(err, 'ERR_OPENSTACK') || isProvisioningError(err)) return false;
  const code = err.status;
  return code === undefined || code === 502 || code === 503 || code === 504;
}

/** A load balancer went to ERROR (or DELETED, or timed out) while Raven waited for ACTIVE. */
export function isOpenStackProvisioningFailed(err: unknown): boolean {
  return isProvisioningError(err);
}

/** The fault type an OpenStack service reported (`IpAddressAlreadyAllocated`, `NetworkInUse`, ...). */
export function openStackFaultType(err: unknown): string | undefined {
  return isRavenError(err, 'ERR_OPENSTACK') ? err.fault.type : undefined;
}

// Failures of the connect phase: the request bytes never left, so even a POST may be resent.
const CONNECT_FAILURES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * The request never reached the server (the connection could not be made), so resending it cannot
 * duplicate an effect. Looks through an OpenStack error to the transport failure inside it.
 */
export function isNotSent(err: unknown): boolean {
  const transport = isRavenError(err, 'ERR_OPENSTACK') ? err.cause : err;
  if (!isRavenError(transport, 'ERR_TRANSPORT')) return false;
  const code = (transport.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && CONNECT_FAILURES.has(code);
}

/**
 * SQLSTATE classes and codes of a PostgreSQL failure that may clear on its own: the connection
 * (08), a transaction rollback such as a serialization failure or deadlock (40), insufficient
 * resources (53), a lock not available (55P03), operator intervention such as a shutdown (57),
 * a system or internal error (58, XX).
 */
const RETRYABLE_SQLSTATE = /^(08|40|53|57|58|XX)|^55P03$/;

/**
 * Whether a PostgreSQL client failure may succeed when tried again. A SQLSTATE outside
 * {@link RETRYABLE_SQLSTATE} (a data exception, a constraint, a missing privilege, a failed
 * password) is not. A failure without a SQLSTATE is the connection's (refused, reset, terminated,
 * timed out) and is.
 */
export function isRetryablePostgresError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return RETRYABLE_SQLSTATE.test(code);
  return true;
}

/** NATS client error codes a retry cannot fix: the message or the account is wrong, not the server's state. */
const NATS_PERMANENT = new Set([
  'MAX_PAYLOAD_EXCEEDED',
  'BAD_SUBJECT',
  'BAD_HEADER',
  'BAD_PAYLOAD',
  'BAD_JSON',
  'PERMISSIONS_VIOLATION',
  'AUTHORIZATION_VIOLATION',
  'AUTHENTICATION_EXPIRED',
  'INVALID_OPTION',
]);

/**
 * Whether a NATS JetStream publish failure may succeed when tried again: a timeout, no responders
 * (503: JetStream or the stream not there yet), a lost connection are; a payload over the server's
 * limit, a bad subject, a permission refusal and a JetStream API answer of 400 (bad request) are not.
 */
export function isRetryableNatsError(err: unknown): boolean {
  const e = err as { code?: unknown; api_error?: { code?: unknown } } | null;
  if (typeof e?.code === 'string' && NATS_PERMANENT.has(e.code)) return false;
  if (e?.api_error?.code === 400) return false;
  return true;
}

/** Redis error replies that describe the server's state, not the command: they may clear. */
const REDIS_TRANSIENT_REPLY =
  /^(OOM|LOADING|BUSY|READONLY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|NOSCRIPT|MISCONF)\b/;

/**
 * Whether a Redis failure may succeed when tried again: a lost connection, and error replies about
 * the server's state (out of memory, loading, busy, read-only replica, ...) are; other error replies
 * (a wrong type, a syntax error, a missing permission or password) are not.
 */
export function isRetryableRedisError(err: unknown): boolean {
  if (!(err instanceof Error)) return true;
  if (err.name !== 'ReplyError') return true;
  return REDIS_TRANSIENT_REPLY.test(err.message);
}

/** nodemailer's codes for failures no retry fixes: credentials refused or missing, a bad envelope or setup. */
const SMTP_PERMANENT = new Set(['EAUTH', 'ENOAUTH', 'EENVELOPE', 'ECONFIG', 'EREQUIRETLS']);

/**
 * Whether an SMTP failure (nodemailer's errors) may succeed when tried again: a refused or dropped
 * connection, a timeout and 4xx answers ("try again later") are; 5xx answers (among them a server
 * refusing the STARTTLS the config requires), refused credentials and a certificate that does not
 * verify are not.
 */
export function isRetryableSmtpError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return true;
  const e = err as { code?: unknown; originalCode?: unknown; responseCode?: unknown };
  if (isCertificateError(err) || isCertificateError({ code: e.originalCode })) return false;
  if (typeof e.responseCode === 'number') return e.responseCode < 500;
  return !(typeof e.code === 'string' && SMTP_PERMANENT.has(e.code));
}
