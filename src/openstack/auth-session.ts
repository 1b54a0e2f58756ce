/**
 * Who the client is, and where the services are. A {@link AuthSession} hands out the current
 * {@link SessionInfo} (token, project, endpoints).
 *
 * - {@link KeystoneSession}: Keystone v3 password or application-credential auth. The token is
 *   cached until `tokenRefreshMarginMs` before its `expires_at` (bounded to half its lifetime);
 *   concurrent callers share one authentication; after a 401 from a service the caller
 *   invalidates the info and gets a fresh token once. Secrets stay in private fields and are
 *   never logged or put in errors.
 * - {@link NoAuthSession}: services run with `auth_strategy = noauth`; no token, endpoints from the
 *   configuration, and the project id goes into every create body (noauth ignores X-Project-Id,
 *   which is still sent).
 */
import * as z from 'zod';
import { ConfigError } from '../errors/raven-error.js';
import { raceSignal } from '../util/signals.js';
import { callApi, type CallDeps } from './call-api.js';
import type { OpenStackConfig } from './openstack-config.js';
import { OpenStackError } from '../errors/openstack-error.js';
import { selectEndpoint, normaliseEndpoint, type CatalogService } from './service-catalog.js';

/** A service the client calls, by catalog type. */
export type ServiceType = 'network' | 'load-balancer';

export interface SessionInfo {
  /** The Keystone token; undefined in noauth mode. */
  readonly token: string | undefined;
  /** The project the session acts in, when known. */
  readonly projectId: string | undefined;
  /** Whether create bodies must carry `project_id` (noauth: the services cannot tell otherwise). */
  readonly injectProjectId: boolean;
  /** Root URL of a service; a {@link ConfigError} when neither config nor catalog has one. */
  endpoint(service: ServiceType): string;
}

export interface AuthSession {
  /** A valid session info, authenticating when there is none or it is about to expire. */
  current(signal?: AbortSignal): Promise<SessionInfo>;
  /** Forget `info` after a service answered 401; false when a new one cannot help (noauth). */
  invalidate(info: SessionInfo): boolean;
}

const CONFIG_ENDPOINT_KEYS = { network: 'network', 'load-balancer': 'loadBalancer' } as const;

function configuredEndpoint(config: OpenStackConfig, service: ServiceType): string | undefined {
  const url = config.endpoints[CONFIG_ENDPOINT_KEYS[service]];
  return url === undefined ? undefined : normaliseEndpoint(url);
}

/** noauth: endpoints from the configuration, `projectId` injected into create bodies. */
export class NoAuthSession implements AuthSession {
  readonly #info: SessionInfo;

  constructor(config: OpenStackConfig & { auth: { type: 'noauth' } }) {
    this.#info = {
      token: undefined,
      projectId: config.auth.projectId,
      injectProjectId: true,
      endpoint(service) {
        const url = configuredEndpoint(config, service);
        if (url !== undefined) return url;
        const key = CONFIG_ENDPOINT_KEYS[service];
        throw new ConfigError(`noauth has no service catalog: give the ${service} URL in endpoints.${key}`, {
          path: `endpoints.${key}`,
        });
      },
    };
  }

  current(): Promise<SessionInfo> {
    return Promise.resolve(this.#info);
  }

  invalidate(): boolean {
    return false;
  }
}

const tokenBodySchema = z.object({
  token: z.object({
    expires_at: z.string(),
    catalog: z
      .array(
        z.object({
          type: z.string(),
          name: z.string().optional(),
          endpoints: z.array(
            z.object({
              url: z.string(),
              interface: z.string(),
              region: z.string().nullish(),
              region_id: z.string().nullish(),
            }),
          ),
        }),
      )
      .default([]),
    project: z.object({ id: z.string() }).optional(),
  }),
});

type KeystoneConfig = OpenStackConfig & { auth: { type: 'password' | 'applicationCredential' } };

/**
 * Keystone v3 tokens, cached and shared.
 *
 * @example
 * const session = new KeystoneSession(config, deps);
 * const info = await session.current(signal);
 * info.endpoint('network'); // from the catalog, by interface and region
 */
export class KeystoneSession implements AuthSession {
  readonly #config: KeystoneConfig;
  readonly #deps: CallDeps;
  #cached: { info: SessionInfo; refreshAt: number } | undefined;
  #inflight: Promise<SessionInfo> | undefined;

  constructor(config: KeystoneConfig, deps: CallDeps) {
    this.#config = config;
    this.#deps = deps;
  }

  current(signal?: AbortSignal): Promise<SessionInfo> {
    const cached = this.#cached;
    if (cached !== undefined && this.#deps.clock.now() < cached.refreshAt)
      return Promise.resolve(cached.info);
    // One authentication for all callers; a caller's abort stops its wait, not the shared request.
    this.#inflight ??= this.#authenticate().finally(() => {
      this.#inflight = undefined;
    });
    return raceSignal(this.#inflight, signal);
  }

  invalidate(info: SessionInfo): boolean {
    if (this.#cached?.info === info) this.#cached = undefined;
    return true;
  }

  async #authenticate(): Promise<SessionInfo> {
    const { base, path } = identityPath(this.#config.auth.authUrl);
    const started = this.#deps.clock.now();
    // Creating a token has no lasting effect, so this POST may be resent like a GET.
    const answer = await callApi(this.#deps, {
      service: 'identity',
      method: 'POST',
      base,
      path,
      body: authBody(this.#config.auth),
      idempotent: true,
    });
    const token = answer.headers['x-subject-token'];
    const parsed = tokenBodySchema.safeParse(answer.body);
    const expiresAt = parsed.success ? Date.parse(parsed.data.token.expires_at) : Number.NaN;
    if (typeof token !== 'string' || token === '' || !parsed.success || Number.isNaN(expiresAt)) {
      throw new OpenStackError({
        service: 'identity',
        call: `POST ${path}`,
        status: answer.status,
        fault: {
          type: 'InvalidTokenResponse',
          message:
            typeof token !== 'string' || token === ''
              ? 'the answer has no X-Subject-Token header'
              : 'the answer has no token with expires_at',
        },
      });
    }
    const info = this.#info(token, parsed.data.token.catalog, parsed.data.token.project?.id);
    const lifetime = Math.max(0, expiresAt - started);
    const margin = Math.min(this.#config.tokenRefreshMarginMs, lifetime / 2);
    this.#cached = { info, refreshAt: expiresAt - margin };
    this.#deps.logger.debug(
      {
        method: this.#config.auth.type,
        projectId: info.projectId,
        expiresAt: new Date(expiresAt).toISOString(),
      },
      'keystone: authenticated',
    );
    return info;
  }

  #info(token: string, catalog: CatalogService[], projectId: string | undefined): SessionInfo {
    const config = this.#config;
    const found = new Map<ServiceType, string>();
    return {
      token,
      projectId,
      injectProjectId: false,
      endpoint(service) {
        let url = found.get(service) ?? configuredEndpoint(config, service);
        url ??= selectEndpoint(catalog, service, {
          interface: config.interface,
          ...(config.region === undefined ? {} : { region: config.region }),
        });
        found.set(service, url);
        return url;
      },
    };
  }
}

/** `http://host:5000/v3` or `http://host:5000` → base `http://host:5000`, path `/v3/auth/tokens`. */
function identityPath(authUrl: string): { base: string; path: string } {
  const base = authUrl.replace(/\/+$/, '').replace(/\/v3$/, '');
  return { base, path: '/v3/auth/tokens' };
}

function authBody(auth: KeystoneConfig['auth']): unknown {
  if (auth.type === 'applicationCredential') {
    return {
      auth: {
        identity: {
          methods: ['application_credential'],
          application_credential: {
            id: auth.applicationCredentialId,
            secret: auth.applicationCredentialSecret,
          },
        },
      },
    };
  }
  const user =
    auth.userId !== undefined
      ? { id: auth.userId, password: auth.password }
      : { name: auth.username, domain: ref(auth.userDomainId, auth.userDomainName), password: auth.password };
  let scope: unknown;
  if (auth.projectId !== undefined) scope = { project: { id: auth.projectId } };
  else if (auth.projectName !== undefined)
    scope = {
      project: { name: auth.projectName, domain: ref(auth.projectDomainId, auth.projectDomainName) },
    };
  else scope = { domain: ref(auth.domainId, auth.domainName) };
  return { auth: { identity: { methods: ['password'], password: { user } }, scope } };
}

function ref(
  id: string | undefined,
  name: string | undefined,
): { id: string } | { name: string | undefined } {
  return id !== undefined ? { id } : { name };
}
