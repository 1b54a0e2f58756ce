/**
 * Waiting for a load balancer to accept changes. Octavia answers 409 "... is immutable and cannot
 * be updated" to any change on a load balancer (or its listeners, pools, members) while it is
 * PENDING_*; each accepted change puts it back in PENDING_UPDATE until the driver is done.
 *
 * - {@link waitForActive} polls `provisioning_status` on the injected clock with the project's
 *   {@link Backoff} (1 s growing to 5 s; right after a change the first look waits too) until ACTIVE; ERROR or DELETED fail at once, and the deadline fails with the last status seen
 *   (both as {@link OpenStackProvisioningError}). A 404 while waiting is thrown as it is.
 * - {@link whenActive} runs a change once the load balancer is ACTIVE and, when the change is
 *   refused as immutable anyway (another writer got in between), waits again and retries once.
 * - {@link LoadBalancerChanges} does the same for a run of changes, waiting only while a change
 *   may be pending.
 */
import { isOpenStackImmutable } from '../errors/classify.js';
import { sleep, type Clock } from '../util/clock.js';
import { Backoff, type BackoffOptions } from '../util/backoff.js';
import type { Logger } from '../util/logger.js';
import { OpenStackProvisioningError } from '../errors/openstack-error.js';
import type { LoadBalancer, ProvisioningStatus } from './octavia-types.js';

/** What a provisioning_status means for the next change: go, wait, or give up. */
export type ProvisioningPhase = 'ready' | 'pending' | 'failed';

/**
 * Classify a provisioning_status: ACTIVE is ready for changes, PENDING_* will settle, ERROR and
 * DELETED will not. An absent status (old or partial answers) counts as ready; an unknown one as
 * pending.
 *
 * @example
 * provisioningPhase((await octavia.loadBalancers.get(id)).provisioning_status); // 'pending'
 */
export function provisioningPhase(status: ProvisioningStatus | undefined): ProvisioningPhase {
  switch (status) {
    case undefined:
    case 'ACTIVE':
      return 'ready';
    case 'PENDING_CREATE':
    case 'PENDING_UPDATE':
    case 'PENDING_DELETE':
      return 'pending';
    case 'ERROR':
    case 'DELETED':
      return 'failed';
    default: {
      // Exhaustive at compile time; a status a newer Octavia invents is waited on, up to the deadline.
      const _exhaustive: never = status;
      return 'pending';
    }
  }
}

export interface WaitOptions {
  /** Give up after this long; default 300 000 ms (an amphora can take minutes to boot). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * A change was just accepted: the load balancer is PENDING_* for sure, so the first look is
   * after the first delay, not at once.
   */
  afterChange?: boolean;
}

export interface WaiterDeps {
  get(id: string, options: { signal?: AbortSignal }): Promise<LoadBalancer>;
  clock: Clock;
  logger: Logger;
  /** Jitter for the poll delays, in [0, 1). */
  random?: () => number;
}

// The first look comes about when a fast driver is done (the noop driver and a loaded lab take
// ~1 s per change); later ones back off to 5 s so a slow amphora boot costs a few dozen GETs, not
// hundreds. Polling sooner only buys PENDING answers.
const POLL: Omit<BackoffOptions, 'random'> = { initialMs: 1_000, factor: 1.5, maxMs: 5_000, jitter: 0.1 };
const DEFAULT_TIMEOUT_MS = 300_000;

/**
 * Resolve with the load balancer once its provisioning_status is ACTIVE.
 *
 * @example
 * const lb = await waitForActive(deps, lbId, { timeoutMs: 60_000, signal });
 */
export async function waitForActive(
  deps: WaiterDeps,
  lbId: string,
  options: WaitOptions = {},
): Promise<LoadBalancer> {
  const started = deps.clock.now();
  const deadline = started + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  const backoff = new Backoff({ ...POLL, ...(deps.random === undefined ? {} : { random: deps.random }) });
  if (options.afterChange === true) await sleep(deps.clock, backoff.fail(), options.signal);
  for (;;) {
    const lb = await deps.get(lbId, signal);
    const phase = provisioningPhase(lb.provisioning_status);
    if (phase === 'ready') return lb;
    const status = lb.provisioning_status ?? 'ACTIVE';
    const failed = phase === 'failed';
    const now = deps.clock.now();
    if (failed || now >= deadline) {
      throw new OpenStackProvisioningError({
        call: `GET /v2/lbaas/loadbalancers/${lbId}`,
        resource: { type: 'loadbalancer', id: lbId, ...(lb.name ? { name: lb.name } : {}) },
        provisioningStatus: status,
        ...(lb.operating_status === undefined ? {} : { operatingStatus: lb.operating_status }),
        timedOut: !failed,
        waitedMs: now - started,
      });
    }
    await sleep(deps.clock, Math.min(backoff.fail(), deadline - now), options.signal);
  }
}

/** How often a change refused as immutable is tried again (after a wait each time). */
export const IMMUTABLE_RETRIES = 3;

/** What the caller knows of a load balancer's provisioning status. */
export type KnownState = 'active' | 'changed' | 'unknown';

/**
 * A run of changes on one load balancer that waits only when it must: before a change while a
 * change of its own (or a status not known to be ACTIVE) may still be pending, and in
 * {@link LoadBalancerChanges.settle}. A pass that changes nothing makes no status call at all;
 * one that makes n changes waits n times (Octavia takes one change at a time), each wait starting
 * one poll delay after the change.
 *
 * @example
 * const changes = new LoadBalancerChanges(deps, lb.id, lb.provisioning_status === 'ACTIVE' ? 'active' : 'unknown', { signal });
 * await changes.change(() => octavia.listeners.create({ loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80 }));
 * await changes.settle();
 */
export class LoadBalancerChanges {
  readonly #deps: WaiterDeps;
  readonly #lbId: string;
  readonly #options: WaitOptions;
  #active: boolean;
  #changed = false;

  /**
   * `known`: `active` when the caller has just seen it ACTIVE (in a list answer), `changed` right
   * after the caller's own change (its create), `unknown` otherwise.
   */
  constructor(deps: WaiterDeps, lbId: string, known: KnownState, options: WaitOptions = {}) {
    this.#deps = deps;
    this.#lbId = lbId;
    this.#active = known === 'active';
    this.#changed = known === 'changed';
    this.#options = options;
  }

  /**
   * Run `change` once the load balancer is ACTIVE. A 409 immutable is retried after another wait
   * that starts one poll delay later, up to {@link IMMUTABLE_RETRIES} times: Octavia marks the
   * load balancer ACTIVE before the pool or listener a change touched, so on a loaded server the
   * load balancer can look ready while the object is still PENDING_UPDATE for a second or two.
   */
  async change<R>(change: () => Promise<R>): Promise<R> {
    await this.settle();
    try {
      for (let retry = 1; ; retry++) {
        try {
          return await change();
        } catch (err) {
          if (!isOpenStackImmutable(err) || retry > IMMUTABLE_RETRIES) throw err;
          this.#deps.logger.debug(
            { loadBalancer: this.#lbId, retry },
            'octavia: load balancer or its child is immutable; waiting and retrying',
          );
          this.#active = false;
          this.#changed = true;
          await this.settle();
        }
      }
    } finally {
      this.#active = false;
      this.#changed = true;
    }
  }

  get loadBalancerId(): string {
    return this.#lbId;
  }

  /** Wait until the load balancer is ACTIVE, unless it is known to be. */
  async settle(): Promise<void> {
    if (this.#active) return;
    await waitForActive(this.#deps, this.#lbId, { ...this.#options, afterChange: this.#changed });
    this.#active = true;
    this.#changed = false;
  }
}

/**
 * Run `change` when the load balancer is ACTIVE; on a 409 immutable, wait for ACTIVE again and run
 * it a second time. Other errors, and a second immutable refusal, are thrown.
 *
 * @example
 * const listener = await whenActive(deps, lbId, () => octavia.listeners.create({ loadbalancer_id: lbId, protocol: 'TCP', protocol_port: 80 }));
 */
export async function whenActive<R>(
  deps: WaiterDeps,
  lbId: string,
  change: () => Promise<R>,
  options: WaitOptions = {},
): Promise<R> {
  await waitForActive(deps, lbId, options);
  try {
    return await change();
  } catch (err) {
    if (!isOpenStackImmutable(err)) throw err;
    deps.logger.debug(
      { loadBalancer: lbId },
      'octavia: load balancer became immutable; waiting and retrying once',
    );
    await waitForActive(deps, lbId, options);
    return await change();
  }
}
