/**
 * Port pools: each namespace keeps pre-created ports, so that a new pod's port is taken from the
 * pool (its tags moved to the pod, then its attributes set) instead of created.
 *
 * A pool port lies on the namespace's network with an address on each of its subnets; it belongs
 * to the namespace (role `pool-port`: the namespace's description and tags), has
 * `device_owner: raven:pool` and no security group, so it lets nothing through until a pod takes
 * it. The namespace's reconcile fills its pool up to `size` in one bulk create when fewer than
 * `refillBelow` are free, deletes pool ports of an earlier namespace of the same name or of another
 * network, trims a pool above `size`, and empties it when pools are off. A take that leaves fewer
 * than `refillBelow` free starts a refill in the background. A namespace being deleted loses its
 * pool first, and the garbage collector finds the pools of namespaces deleted while Raven was down
 * (their description names the namespace), so pools are cleaned up like everything else.
 *
 * Taking a port sets its tags (the pod's: from then on every lookup finds it as the pod's port)
 * and its attributes (name, description, device, groups) with two calls made at once. A crash
 * that lets only the tags land leaves a take the pod's next pass finishes, as it puts back any
 * attribute of its port that differs; one that lets only the attributes land leaves a pool port
 * that is not inert, which the next fill deletes: neither leaks a port nor gives a pod two. A port handed out is not handed out again; the free list is rebuilt from what
 * Neutron lists at each fill, less the ports handed out since.
 */
import { isNotFound } from '../errors/classify.js';
import type { Port, PortCreate, PortUpdate } from '../openstack/neutron-types.js';
import type { OpenStackClient } from '../openstack/openstack-client.js';
import type { Logger } from '../util/logger.js';
import { clusterTag, identityOf, ownerTag, roleTag, uidTag } from './identity.js';
import type { NamespaceNetwork } from './namespace-network.js';
import type { PortPoolSettings, TranslatorSettings } from './settings.js';

/** What the pools use of the translator's context (`context.ts`, which holds the pools). */
export interface PortPoolContext {
  os: OpenStackClient;
  settings: Pick<TranslatorSettings, 'clusterId'>;
  logger: Logger;
}

/** The device_owner of a port waiting in a pool. */
export const POOL_DEVICE_OWNER = 'raven:pool';

interface Pool {
  /** The namespace uid and network the free ports are for. */
  uid: string;
  networkId: string;
  free: Port[];
  /** Ports handed out since the last listing (a listing may still show them as free). */
  taken: Set<string>;
  /** The fill running or queued last: fills of one namespace run one at a time. */
  queue: Promise<void> | undefined;
  refillQueued: boolean;
}

export interface PortPoolStats {
  /** Pods given a port from a pool. */
  taken: number;
  /** Pool ports created. */
  created: number;
}

export class PortPools {
  readonly #settings: PortPoolSettings | undefined;
  readonly #pools = new Map<string, Pool>();
  readonly stats: PortPoolStats = { taken: 0, created: 0 };
  /** Told of a background refill that failed: the namespace's reconcile (retried with backoff) fills it. */
  onRefillFailure: (namespace: string) => void = () => undefined;

  /** `settings` undefined: pools are off (and any left from before are emptied). */
  constructor(settings: PortPoolSettings | undefined) {
    this.#settings = settings;
  }

  get enabled(): boolean {
    return this.#settings !== undefined;
  }

  /** Free ports known in every pool. */
  freeTotal(): number {
    let n = 0;
    for (const pool of this.#pools.values()) n += pool.free.length;
    return n;
  }

  /**
   * A free port of namespace `name` on `net`, taken for a pod: its tags become `tags` and its
   * attributes `attributes`, both at once (two calls: Neutron sets tags only by a call of their
   * own). Undefined when none is free.
   */
  async take(
    ctx: PortPoolContext,
    name: string,
    net: NamespaceNetwork,
    tags: readonly string[],
    attributes: PortUpdate,
  ): Promise<Port | undefined> {
    const pool = this.#pools.get(name);
    if (pool === undefined || pool.networkId !== net.networkId) return undefined;
    const ports = ctx.os.neutron.ports;
    try {
      for (let free = pool.free.shift(); free !== undefined; free = pool.free.shift()) {
        pool.taken.add(free.id);
        // Either may land without the other (a crash, a timeout): tags without attributes is a
        // take the pod's next pass finishes; attributes without tags leave a pool port that is
        // not inert, which the next fill deletes.
        const [tagged, updated] = await Promise.allSettled([
          ports.setTags(free.id, tags),
          ports.update(free.id, attributes),
        ]);
        if (tagged.status === 'fulfilled' && updated.status === 'fulfilled') {
          this.stats.taken++;
          return { ...updated.value, tags: tagged.value };
        }
        const failure = [tagged, updated].find((r) => r.status === 'rejected' && !isNotFound(r.reason));
        // Both 404: deleted behind our back (or by a trim); try the next one.
        if (failure?.status === 'rejected') {
          // The next fill looks at it again: still free, not inert (deleted), or the pod's by its tags.
          pool.taken.delete(free.id);
          throw failure.reason;
        }
      }
      return undefined;
    } finally {
      this.#refillIfLow(ctx, name, pool, net);
    }
  }

  /** Fill, trim or empty the pool of namespace `name` (one fill at a time per namespace). */
  sync(ctx: PortPoolContext, name: string, uid: string, net: NamespaceNetwork): Promise<void> {
    let pool = this.#pools.get(name);
    if (pool === undefined || pool.uid !== uid || pool.networkId !== net.networkId) {
      pool = {
        uid,
        networkId: net.networkId,
        free: [],
        taken: new Set(),
        queue: pool?.queue,
        refillQueued: false,
      };
      this.#pools.set(name, pool);
    }
    const target = pool;
    const run = (target.queue ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => this.#fill(ctx, name, target, net));
    target.queue = run;
    return run;
  }

  /** Delete every pool port of namespace `name` (whatever its uid) and forget the pool. */
  async remove(ctx: PortPoolContext, name: string): Promise<void> {
    const pool = this.#pools.get(name);
    this.#pools.delete(name);
    await pool?.queue?.catch(() => undefined);
    for (const port of await this.#list(ctx, name)) await ctx.os.neutron.ports.delete(port.id);
  }

  #list(ctx: PortPoolContext, name: string): Promise<Port[]> {
    const c = ctx.settings.clusterId;
    return ctx.os.neutron.ports.list({ tags: [clusterTag(c), roleTag('pool-port'), ownerTag(name)] });
  }

  async #fill(ctx: PortPoolContext, name: string, pool: Pool, net: NamespaceNetwork): Promise<void> {
    const ports = ctx.os.neutron.ports;
    const listed = await this.#list(ctx, name);
    const ids = new Set(listed.map((p) => p.id));
    for (const id of pool.taken) if (!ids.has(id)) pool.taken.delete(id);
    const subnets = net.subnets.map((s) => s.id).sort();
    // Not inert any more (a take whose tags did not land) or not of this namespace and network.
    const stale = listed.filter(
      (p) =>
        !pool.taken.has(p.id) &&
        (p.device_owner !== POOL_DEVICE_OWNER ||
          p.tags?.includes(uidTag(pool.uid)) !== true ||
          p.network_id !== net.networkId ||
          JSON.stringify(p.fixed_ips.map((f) => f.subnet_id).sort()) !== JSON.stringify(subnets)),
    );
    const usable = listed.filter((p) => !stale.includes(p) && !pool.taken.has(p.id));
    const size = this.#settings?.size ?? 0;
    const extra = usable.slice(size);
    // Out of the free list before the deletes, so no take picks a port being deleted.
    pool.free = usable.slice(0, size).filter((p) => !pool.taken.has(p.id));
    for (const port of [...stale, ...extra]) await ports.delete(port.id);
    if (this.#settings === undefined || pool.free.length >= this.#settings.refillBelow) return;
    const identity = identityOf(ctx.settings.clusterId, 'pool-port', {
      kind: 'Namespace',
      name,
      uid: pool.uid,
    });
    const body: PortCreate & { tags: string[] } = {
      network_id: net.networkId,
      fixed_ips: net.subnets.map((s) => ({ subnet_id: s.id })),
      device_owner: POOL_DEVICE_OWNER,
      security_groups: [],
      name: identity.name,
      description: identity.description,
      tags: identity.tags,
    };
    const want = size - pool.free.length;
    const created = ports.tagsOnCreate
      ? await ports.createMany(Array.from({ length: want }, () => body))
      : await Promise.all(Array.from({ length: want }, () => ports.create(body)));
    this.stats.created += created.length;
    if (this.#pools.get(name) === pool) pool.free.push(...created);
    else for (const port of created) await ports.delete(port.id);
  }

  #refillIfLow(ctx: PortPoolContext, name: string, pool: Pool, net: NamespaceNetwork): void {
    if (this.#settings === undefined || this.#pools.get(name) !== pool || pool.refillQueued) return;
    if (pool.free.length >= this.#settings.refillBelow) return;
    pool.refillQueued = true;
    this.sync(ctx, name, pool.uid, net)
      .catch((error: unknown) => {
        // Until the namespace's pass fills it, its new pods get ports by create.
        ctx.logger.warn(
          { namespace: name, err: error instanceof Error ? error.message : String(error) },
          'port pool refill failed; the namespace will fill it',
        );
        this.onRefillFailure(name);
      })
      .finally(() => {
        pool.refillQueued = false;
      });
  }
}
