/**
 * One OpenStack API call with retries: JSON in, JSON out, every failure an {@link OpenStackError}
 * naming the call and the resource. Credentials are the caller's business (the headers passed
 * in); this layer never logs headers or bodies, which may carry tokens and passwords.
 */
import { DecodeError, TransportError } from '../errors/raven-error.js';
import { retryAfterHeaderSeconds } from '../util/retry-after.js';
import { sleep, type Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { HttpExchange, WireAnswer } from './http-exchange.js';
import {
  OpenStackError,
  parseFault,
  type OpenStackService,
  type ResourceRef,
} from '../errors/openstack-error.js';
import { retryDelay, shouldRetry, type RetryPolicy } from './retry-policy.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/** What every call needs, shared by the Keystone session and the service transport. */
export interface CallDeps {
  exchange: HttpExchange;
  clock: Clock;
  random: () => number;
  logger: Logger;
  retry: RetryPolicy;
  timeoutMs: number;
  userAgent: string;
  observe?: CallObserver;
}

/** One HTTP attempt, as reported to a {@link CallObserver}. */
export interface CallRecord {
  service: OpenStackService;
  method: HttpMethod;
  /** The path's collection names without ids or version: `ports`, `pools/members`, `ports/tags`. */
  resource: string;
  /** `ok`, the status (`404`, `409`, `500`, ...), or `transport` when no answer arrived. */
  outcome: string;
  /** From the request to its answer (or failure), by the client's clock. */
  seconds: number;
}

/** Told of every attempt (retries count: each is a call the server sees). */
export type CallObserver = (call: CallRecord) => void;

const ID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$|^[0-9a-f]{32}$/i;
const VERSION_OR_PREFIX = /^(v\d+(\.\d+)?|lbaas)$/;

/**
 * The resource names of an API path, for metrics: ids, versions and `lbaas` left out, so the
 * label has a handful of values.
 *
 * @example
 * callResource('/v2/lbaas/pools/5f0c…/members'); // 'pools/members'
 */
export function callResource(path: string): string {
  const names = path.split('/').filter((p) => p !== '' && !ID.test(p) && !VERSION_OR_PREFIX.test(p));
  return names.length === 0 ? '/' : names.join('/');
}

export interface ApiCall {
  service: OpenStackService;
  method: HttpMethod;
  /** Service root URL without a trailing slash. */
  base: string;
  /** API path, e.g. `/v2.0/ports/ID`; it names the call in errors. */
  path: string;
  /** Query string including the leading `?`, or empty. */
  query?: string;
  headers?: Record<string, string>;
  body?: unknown;
  resource?: ResourceRef;
  /** Safe to send twice; default true for GET, PUT and DELETE. */
  idempotent?: boolean;
  signal?: AbortSignal;
}

export interface ApiAnswer {
  status: number;
  headers: WireAnswer['headers'];
  /** The decoded JSON body; undefined when the answer had none (204, 202 without body). */
  body: unknown;
}

/**
 * Send `call`, retrying per {@link shouldRetry} with backoff on the injected clock.
 *
 * @example
 * const answer = await callApi(deps, { service: 'network', method: 'GET', base, path: '/v2.0/networks' });
 */
export async function callApi(deps: CallDeps, call: ApiCall): Promise<ApiAnswer> {
  const idempotent = call.idempotent ?? (call.method !== 'POST' && call.method !== 'PATCH');
  for (let attempt = 1; ; attempt++) {
    const started = deps.clock.now();
    try {
      const answer = await attemptOnce(deps, call);
      deps.logger.debug(
        {
          call: `${call.method} ${call.path}`,
          status: answer.status,
          attempt,
          ms: deps.clock.now() - started,
        },
        'openstack call',
      );
      return answer;
    } catch (err) {
      if (
        call.signal?.aborted === true ||
        attempt >= deps.retry.maxAttempts ||
        !shouldRetry(err, idempotent)
      ) {
        deps.logger.debug(
          { call: `${call.method} ${call.path}`, attempt, err: (err as Error).message },
          'openstack call failed',
        );
        throw err;
      }
      const delay = retryDelay(deps.retry, attempt, err, deps.random);
      deps.logger.debug(
        { call: `${call.method} ${call.path}`, attempt, delayMs: delay, err: (err as Error).message },
        'openstack call failed; retrying',
      );
      await sleep(deps.clock, delay, call.signal);
    }
  }
}

async function attemptOnce(deps: CallDeps, call: ApiCall): Promise<ApiAnswer> {
  if (deps.observe === undefined) return attemptUnobserved(deps, call);
  const record = { service: call.service, method: call.method, resource: callResource(call.path) };
  const started = deps.clock.now();
  const seconds = (): number => (deps.clock.now() - started) / 1000;
  try {
    const answer = await attemptUnobserved(deps, call);
    deps.observe({ ...record, outcome: 'ok', seconds: seconds() });
    return answer;
  } catch (err) {
    const status = err instanceof OpenStackError ? err.status : undefined;
    deps.observe({
      ...record,
      outcome: status === undefined ? 'transport' : String(status),
      seconds: seconds(),
    });
    throw err;
  }
}

async function attemptUnobserved(deps: CallDeps, call: ApiCall): Promise<ApiAnswer> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    'user-agent': deps.userAgent,
    ...call.headers,
  };
  let body: string | undefined;
  if (call.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(call.body);
  }
  let answer: WireAnswer;
  try {
    answer = await deps.exchange.send({
      method: call.method,
      url: `${call.base}${call.path}${call.query ?? ''}`,
      headers,
      ...(body === undefined ? {} : { body }),
      timeoutMs: deps.timeoutMs,
      ...(call.signal === undefined ? {} : { signal: call.signal }),
    });
  } catch (err) {
    if (call.signal?.aborted === true || !(err instanceof TransportError)) throw err;
    throw new OpenStackError({ ...where(call), cause: err });
  }
  if (answer.status < 200 || answer.status >= 300) throw errorFromAnswer(call, answer, deps.clock.now());
  return { status: answer.status, headers: answer.headers, body: decode(call, answer) };
}

function decode(call: ApiCall, answer: WireAnswer): unknown {
  if (answer.text.trim() === '') return undefined;
  try {
    return JSON.parse(answer.text);
  } catch (err) {
    throw new OpenStackError({
      ...where(call),
      status: answer.status,
      fault: { type: 'DecodeError', message: 'the answer is not JSON' },
      cause: new DecodeError(`${call.method} ${call.path}: the answer is not JSON`, { cause: err }),
    });
  }
}

function errorFromAnswer(call: ApiCall, answer: WireAnswer, now: number): OpenStackError {
  const requestId = header(answer, 'x-openstack-request-id') ?? header(answer, 'x-compute-request-id');
  const retryAfter = retryAfterHeaderSeconds(header(answer, 'retry-after'), now);
  return new OpenStackError({
    ...where(call),
    status: answer.status,
    fault: parseFault(answer.text),
    ...(requestId === undefined ? {} : { requestId }),
    ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter }),
  });
}

function where(call: ApiCall): { service: OpenStackService; call: string; resource?: ResourceRef } {
  return {
    service: call.service,
    call: `${call.method} ${call.path}`,
    ...(call.resource === undefined ? {} : { resource: call.resource }),
  };
}

function header(answer: WireAnswer, name: string): string | undefined {
  const value = answer.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
