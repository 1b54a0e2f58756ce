/**
 * The OpenStack client: configuration in, Neutron and Octavia clients out, sharing one session
 * (Keystone token or noauth) and one connection pool. Nothing is contacted until the first call;
 * Keystone is asked for a token then, and again shortly before it expires or after a 401.
 */
import type { Dispatcher } from 'undici';
import { systemClock, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { KeystoneSession, NoAuthSession, type AuthSession } from './auth-session.js';
import type { CallDeps, CallObserver } from './call-api.js';
import { UndiciExchange, type HttpExchange } from './http-exchange.js';
import { NeutronClient } from './neutron-client.js';
import { OctaviaClient } from './octavia-client.js';
import { parseOpenStackConfig, type OpenStackConfig } from './openstack-config.js';
import { OpenStackTransport } from './openstack-transport.js';

export interface OpenStackClientOptions {
  /** Default: real time with timers that keep the process alive while a retry or wait is pending. */
  clock?: Clock;
  logger?: Logger;
  /** Jitter source for retry delays, in [0, 1). */
  random?: () => number;
  /** A shared undici dispatcher (pool, proxy agent); the client builds and owns one otherwise. */
  dispatcher?: Dispatcher;
  /** Replace the wire entirely (tests, instrumentation). */
  exchange?: HttpExchange;
  /** Told of every HTTP attempt: service, method, resource and outcome (for metrics). */
  onCall?: CallObserver;
}

/**
 * @example
 * const openstack = createOpenStackClient({
 *   auth: { type: 'applicationCredential', authUrl: 'https://keystone.example:5000/v3',
 *           applicationCredentialId: id, applicationCredentialSecret: secret },
 *   region: 'RegionOne',
 * });
 * const ports = await openstack.neutron.ports.list({ tags: ['raven'] });
 * await openstack.close();
 */
export class OpenStackClient {
  readonly neutron: NeutronClient;
  readonly octavia: OctaviaClient;
  readonly #exchange: HttpExchange;
  readonly #session: AuthSession;

  constructor(config: OpenStackConfig, options: OpenStackClientOptions = {}) {
    const clock = options.clock ?? systemClock;
    const logger = (options.logger ?? silentLogger).child({ component: 'openstack' });
    this.#exchange =
      options.exchange ??
      new UndiciExchange(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher });
    const deps: CallDeps = {
      exchange: this.#exchange,
      clock,
      random: options.random ?? Math.random,
      logger,
      retry: config.retry,
      timeoutMs: config.timeoutMs,
      userAgent: config.userAgent,
      ...(options.onCall === undefined ? {} : { observe: options.onCall }),
    };
    const { auth } = config;
    this.#session =
      auth.type === 'noauth'
        ? new NoAuthSession({ ...config, auth })
        : new KeystoneSession({ ...config, auth }, deps);
    const transport = new OpenStackTransport(this.#session, deps);
    this.neutron = new NeutronClient(transport, { tagPortsOnCreate: config.tagPortsOnCreate });
    this.octavia = new OctaviaClient(transport, { clock, logger, random: deps.random });
  }

  /** The project the client acts in (from the token, or the noauth configuration). */
  async projectId(signal?: AbortSignal): Promise<string | undefined> {
    return (await this.#session.current(signal)).projectId;
  }

  /** Let in-flight calls finish, then close the connections. */
  async close(): Promise<void> {
    if (this.#exchange instanceof UndiciExchange) await this.#exchange.close();
  }

  /** Close the connections now; in-flight calls fail. */
  async destroy(err?: Error): Promise<void> {
    if (this.#exchange instanceof UndiciExchange) await this.#exchange.destroy(err);
  }
}

/**
 * Validate `input` (see {@link parseOpenStackConfig}) and build a client.
 */
export function createOpenStackClient(input: unknown, options: OpenStackClientOptions = {}): OpenStackClient {
  return new OpenStackClient(parseOpenStackConfig(input), options);
}
