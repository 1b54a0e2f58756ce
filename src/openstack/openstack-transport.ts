/**
 * Calls to Neutron and Octavia with the session's credentials: `X-Auth-Token` (Keystone) or
 * `X-Project-Id` (noauth), the service root from the session, retries from {@link callApi}, and
 * one re-authentication when a service answers 401 (the token was revoked or expired early).
 * In noauth mode a create call's body gets `project_id` unless it already has one.
 */
import { isUnauthorized } from '../errors/classify.js';
import type { AuthSession, ServiceType, SessionInfo } from './auth-session.js';
import { callApi, type ApiAnswer, type CallDeps, type HttpMethod } from './call-api.js';
import type { ResourceRef } from '../errors/openstack-error.js';

export interface ServiceCall {
  service: ServiceType;
  method: HttpMethod;
  /** API path, e.g. `/v2.0/ports` or `/v2/lbaas/loadbalancers`. */
  path: string;
  /** Query parameters; arrays repeat the key. */
  query?: QueryParams;
  body?: unknown;
  resource?: ResourceRef;
  /** Set on create calls: the wrapper key of the body (`port`) that gets `project_id` in noauth mode. */
  createKey?: string;
  idempotent?: boolean;
  signal?: AbortSignal;
}

export type QueryValue = string | number | boolean | readonly (string | number)[] | undefined;
export type QueryParams = Readonly<Record<string, QueryValue>>;

/** The subset of the transport the resource clients use. */
export interface ServiceTransport {
  request(call: ServiceCall): Promise<ApiAnswer>;
}

/**
 * @example
 * const transport = new OpenStackTransport(session, deps);
 * const { body } = await transport.request({ service: 'network', method: 'GET', path: '/v2.0/networks' });
 */
export class OpenStackTransport implements ServiceTransport {
  readonly #session: AuthSession;
  readonly #deps: CallDeps;

  constructor(session: AuthSession, deps: CallDeps) {
    this.#session = session;
    this.#deps = deps;
  }

  async request(call: ServiceCall): Promise<ApiAnswer> {
    let info = await this.#session.current(call.signal);
    for (let reauthenticated = false; ; reauthenticated = true) {
      try {
        return await this.#send(call, info);
      } catch (err) {
        if (reauthenticated || !isUnauthorized(err) || !this.#session.invalidate(info)) throw err;
        this.#deps.logger.info(
          { call: `${call.method} ${call.path}` },
          'openstack: 401, authenticating again',
        );
        info = await this.#session.current(call.signal);
      }
    }
  }

  #send(call: ServiceCall, info: SessionInfo): Promise<ApiAnswer> {
    const headers: Record<string, string> = {};
    if (info.token !== undefined) headers['x-auth-token'] = info.token;
    if (info.injectProjectId && info.projectId !== undefined) headers['x-project-id'] = info.projectId;
    return callApi(this.#deps, {
      service: call.service,
      method: call.method,
      base: info.endpoint(call.service),
      path: call.path,
      query: toQueryString(call.query),
      headers,
      body: withProjectId(call, info),
      ...(call.resource === undefined ? {} : { resource: call.resource }),
      ...(call.idempotent === undefined ? {} : { idempotent: call.idempotent }),
      ...(call.signal === undefined ? {} : { signal: call.signal }),
    });
  }
}

function withProjectId(call: ServiceCall, info: SessionInfo): unknown {
  if (call.createKey === undefined || !info.injectProjectId || info.projectId === undefined) return call.body;
  const body = (call.body ?? {}) as Record<string, unknown>;
  const projectId = info.projectId;
  const withId = (inner: Record<string, unknown>) =>
    inner.project_id !== undefined ? inner : { ...inner, project_id: projectId };
  const wrapped = body[call.createKey];
  // A bulk create wraps a list: each item gets it.
  if (Array.isArray(wrapped))
    return { ...body, [call.createKey]: (wrapped as Record<string, unknown>[]).map(withId) };
  return { ...body, [call.createKey]: withId((wrapped ?? {}) as Record<string, unknown>) };
}

/**
 * `?a=1&b=x&b=y`, or empty. Arrays repeat the key (Neutron's `id=..&id=..`); use a comma-joined
 * string for `tags` and `tags-any`, which OpenStack reads as one comma-separated value.
 */
export function toQueryString(query: QueryParams | undefined): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value))
      for (const item of value as readonly (string | number)[]) params.append(key, String(item));
    else params.append(key, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}
