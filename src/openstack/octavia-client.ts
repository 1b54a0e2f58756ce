/**
 * Octavia v2 (`/v2/lbaas/...`): load balancers, listeners, pools, members and health monitors,
 * each a {@link RestCollection}; tags go in the create body (API 2.5 and later).
 *
 * Every change to a load balancer's tree needs the load balancer ACTIVE: wrap changes in
 * {@link OctaviaClient.whenActive}, or call {@link OctaviaClient.waitForActive} between them.
 */
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import {
  LoadBalancerChanges,
  waitForActive,
  whenActive,
  type KnownState,
  type WaitOptions,
  type WaiterDeps,
} from './load-balancer-waiter.js';
import type { QueryParams, ServiceTransport } from './openstack-transport.js';
import {
  RestCollection,
  type CallOptions,
  type CollectionSpec,
  type DeleteOutcome,
} from './rest-collection.js';
import type {
  HealthMonitor,
  HealthMonitorCreate,
  HealthMonitorUpdate,
  Listener,
  ListenerCreate,
  ListenerUpdate,
  LoadBalancer,
  LoadBalancerCreate,
  LoadBalancerUpdate,
  Member,
  MemberCreate,
  MemberUpdate,
  Pool,
  PoolCreate,
  PoolUpdate,
} from './octavia-types.js';

function spec(path: string, singular: string, plural: string): CollectionSpec {
  return { service: 'load-balancer', path: `/v2/lbaas/${path}`, singular, plural, tags: 'body' };
}

/** Load balancers; `delete` can cascade to listeners, pools and members. */
export class LoadBalancerCollection extends RestCollection<
  LoadBalancer,
  LoadBalancerCreate,
  LoadBalancerUpdate
> {
  constructor(transport: ServiceTransport) {
    super(transport, spec('loadbalancers', 'loadbalancer', 'loadbalancers'));
  }

  /**
   * Delete (`?cascade=true` removes listeners, pools and members with it; without it Octavia
   * refuses while they exist). A 404 resolves `'already-gone'`. The load balancer goes through
   * PENDING_DELETE: it is gone once `get` answers 404.
   */
  override delete(
    id: string,
    options: CallOptions & { cascade?: boolean; query?: QueryParams } = {},
  ): Promise<DeleteOutcome> {
    const { cascade, query, ...rest } = options;
    return super.delete(id, { ...rest, query: { ...query, ...(cascade === true ? { cascade: true } : {}) } });
  }
}

/** The members of one pool, plus the batch update. */
export class MemberCollection extends RestCollection<Member, MemberCreate, MemberUpdate> {
  readonly #transport: ServiceTransport;
  readonly #poolId: string;

  constructor(transport: ServiceTransport, poolId: string) {
    super(transport, spec(`pools/${encodeURIComponent(poolId)}/members`, 'member', 'members'));
    this.#transport = transport;
    this.#poolId = poolId;
  }

  /**
   * Make the pool's members exactly `members` in one call (`PUT /v2/lbaas/pools/{id}/members`):
   * members matched by address and port are updated, missing ones created, others deleted.
   * Octavia answers 202 and applies it asynchronously (the load balancer goes PENDING_UPDATE).
   */
  async replaceAll(members: readonly MemberCreate[], options: CallOptions = {}): Promise<void> {
    await this.#transport.request({
      service: 'load-balancer',
      method: 'PUT',
      path: `/v2/lbaas/pools/${encodeURIComponent(this.#poolId)}/members`,
      body: { members },
      resource: { type: 'pool', id: this.#poolId },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  }
}

/**
 * @example
 * const lb = await octavia.loadBalancers.create({ name: 'raven-web', vip_port_id, vip_subnet_id, vip_address, tags: ['raven'] });
 * await octavia.waitForActive(lb.id, { timeoutMs: 60_000 });
 * const listener = await octavia.whenActive(lb.id, () =>
 *   octavia.listeners.create({ loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80 }));
 */
export class OctaviaClient {
  readonly loadBalancers: LoadBalancerCollection;
  readonly listeners: RestCollection<Listener, ListenerCreate, ListenerUpdate>;
  readonly pools: RestCollection<Pool, PoolCreate, PoolUpdate>;
  readonly healthMonitors: RestCollection<HealthMonitor, HealthMonitorCreate, HealthMonitorUpdate>;
  readonly #transport: ServiceTransport;
  readonly #waiter: WaiterDeps;

  constructor(transport: ServiceTransport, deps: { clock: Clock; logger: Logger; random?: () => number }) {
    this.#transport = transport;
    this.loadBalancers = new LoadBalancerCollection(transport);
    this.listeners = new RestCollection(transport, spec('listeners', 'listener', 'listeners'));
    this.pools = new RestCollection(transport, spec('pools', 'pool', 'pools'));
    this.healthMonitors = new RestCollection(
      transport,
      spec('healthmonitors', 'healthmonitor', 'healthmonitors'),
    );
    this.#waiter = {
      get: (id, options) => this.loadBalancers.get(id, options),
      clock: deps.clock,
      logger: deps.logger,
      ...(deps.random === undefined ? {} : { random: deps.random }),
    };
  }

  /** The members of pool `poolId`. */
  members(poolId: string): MemberCollection {
    return new MemberCollection(this.#transport, poolId);
  }

  /** Poll until the load balancer is ACTIVE; fails on ERROR, DELETED or the deadline. */
  waitForActive(lbId: string, options: WaitOptions = {}): Promise<LoadBalancer> {
    return waitForActive(this.#waiter, lbId, options);
  }

  /**
   * A run of changes on one load balancer that waits for ACTIVE only while a change may be
   * pending (see {@link KnownState}).
   */
  changes(lbId: string, known: KnownState, options: WaitOptions = {}): LoadBalancerChanges {
    return new LoadBalancerChanges(this.#waiter, lbId, known, options);
  }

  /** Run `change` once the load balancer is ACTIVE, retrying once on a 409 immutable. */
  whenActive<R>(lbId: string, change: () => Promise<R>, options: WaitOptions = {}): Promise<R> {
    return whenActive(this.#waiter, lbId, change, options);
  }
}
