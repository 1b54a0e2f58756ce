/**
 * Errors carrying a Kubernetes `Status`: every non-2xx answer from the apiserver, and every
 * in-stream watch ERROR event, becomes an {@link ApiError}.
 */
import type { Status } from 'kubernetes-types/meta/v1.js';
import { retryAfterHeaderSeconds } from '../util/retry-after.js';
import { RavenError } from './raven-error.js';

/** The request an error belongs to, for messages a user can act on. */
export interface RequestInfo {
  method: string;
  /** Path and query, never credentials. */
  path: string;
}

export class ApiError extends RavenError {
  /** HTTP status code (from the response, or from `Status.code` for in-stream errors). */
  readonly statusCode: number;
  /** The decoded Status; synthesised from the response when the body was not a Status. */
  readonly status: Status;
  readonly request: RequestInfo | undefined;

  constructor(statusCode: number, status: Status, request?: RequestInfo, options: { cause?: unknown } = {}) {
    const reason = status.reason ?? 'Unknown';
    const where = request === undefined ? '' : ` (${request.method} ${request.path})`;
    super('ERR_API', `${statusCode} ${reason}: ${status.message ?? 'no message'}${where}`, options);
    this.statusCode = statusCode;
    this.status = status;
    this.request = request;
  }

  get reason(): string | undefined {
    return this.status.reason;
  }

  /** Seconds the server asked us to wait (Status.details.retryAfterSeconds or Retry-After). */
  get retryAfterSeconds(): number | undefined {
    return this.status.details?.retryAfterSeconds;
  }
}

/**
 * Build a Status-carrying error from a response. `body` is the raw text; when it is a JSON
 * `Status` it is used as is, otherwise a Status is synthesised from the HTTP status line. A
 * `Retry-After` header fills `details.retryAfterSeconds` when the Status has none (an HTTP date
 * only when `now` is given).
 */
export function apiErrorFromResponse(
  statusCode: number,
  body: string,
  request?: RequestInfo,
  retryAfterHeader?: string,
  now?: number,
): ApiError {
  let status: Status | undefined;
  try {
    const parsed = JSON.parse(body) as unknown;
    if (isStatus(parsed)) status = parsed;
  } catch {
    // Not JSON: fall through to a synthesised Status.
  }
  status ??= {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code: statusCode,
    reason: reasonForCode(statusCode),
    message: body.trim().slice(0, 500) || `HTTP ${statusCode}`,
  };
  const retryAfter = retryAfterHeaderSeconds(retryAfterHeader, now);
  if (retryAfter !== undefined && status.details?.retryAfterSeconds === undefined) {
    status = { ...status, details: { ...status.details, retryAfterSeconds: retryAfter } };
  }
  return new ApiError(statusCode, status, request);
}

/** True for a decoded object that is a `meta/v1 Status`. */
export function isStatus(value: unknown): value is Status {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'Status' &&
    typeof (value as { code?: unknown }).code !== 'string'
  );
}

const reasons: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

function reasonForCode(code: number): string {
  return reasons[code] ?? 'Unknown';
}
