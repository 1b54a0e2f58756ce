/**
 * Leader election on a coordination.k8s.io/v1 Lease, so that of several replicas exactly one does
 * the work.
 *
 * Guarantees, with the defaults (lease 15 s, renew deadline 10 s, retry 2 s):
 * - a candidate takes the lease only when it is free, released, or not renewed for a whole lease
 *   duration as measured on the candidate's own clock since it last saw the lease change (clocks
 *   of different machines are never compared);
 * - a leader that cannot renew within the renew deadline stops leading — its `signal` aborts and
 *   `onStoppedLeading` runs — before any other candidate can take over (renew deadline < lease
 *   duration);
 * - on graceful shutdown the leader releases the lease, so a successor takes over at its next
 *   retry instead of waiting out the lease;
 * - every write is conditional on the lease's resourceVersion: two candidates can never both win.
 */
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import { isConflict, isNotFound, isAlreadyExists } from '../errors/classify.js';
import { RavenError } from '../errors/raven-error.js';
import { systemClock, sleep, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';

/** The client calls leader election makes. `KubeClient` provides it. */
export interface LeaseClient {
  request<T>(options: { method: string; path: string; body?: unknown; signal?: AbortSignal }): Promise<T>;
}

/** One leadership term. */
export interface LeaderTerm {
  /** The Lease's `leaseTransitions` when this term began. */
  epoch: number;
}

export interface LeaderElectionOptions {
  client: LeaseClient;
  namespace: string;
  name: string;
  /** Unique per candidate; default hostname + pid + random suffix is the caller's job. */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Release the lease when `run`'s signal aborts. Default true. */
  releaseOnCancel?: boolean;
  /**
   * Leadership starts: do the work until `signal` aborts (leadership lost or shutdown).
   * `term.epoch` is the Lease's `leaseTransitions` as this candidate acquired it: it grows with
   * every change of holder, so it fences writes a deposed leader might still attempt.
   */
  onStartedLeading: (signal: AbortSignal, term: LeaderTerm) => void | Promise<void>;
  /** Leadership ended (lost, or released on shutdown). */
  onStoppedLeading?: () => void;
  /** Someone (maybe this candidate) became leader. */
  onNewLeader?: (identity: string) => void;
  clock?: Clock;
  random?: () => number;
  logger?: Logger;
}

/** Retry periods are stretched by up to this factor (jitter). */
export const JITTER = 1.2;

/**
 * The rule every Lease holder's timings keep: a holder gives up (renew deadline) before anyone
 * else may take over (lease duration), and retries well within the renew deadline.
 */
export function checkLeaseTimings(o: {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}): void {
  if (o.renewDeadlineMs >= o.leaseDurationMs)
    throw new RavenError(
      'ERR_INVALID_ARGUMENT',
      `renewDeadlineMs (${o.renewDeadlineMs}) must be less than leaseDurationMs (${o.leaseDurationMs})`,
    );
  if (o.retryPeriodMs * JITTER >= o.renewDeadlineMs)
    throw new RavenError(
      'ERR_INVALID_ARGUMENT',
      `retryPeriodMs (${o.retryPeriodMs}) must be well below renewDeadlineMs (${o.renewDeadlineMs})`,
    );
}

export class LeaderElector {
  readonly #o: Required<
    Pick<LeaderElectionOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>
  > &
    LeaderElectionOptions;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #log: Logger;
  #observed: { lease: Lease; at: number } | undefined;
  #leading = false;
  #leader: string | undefined;

  constructor(options: LeaderElectionOptions) {
    const o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...options };
    checkLeaseTimings(o);
    this.#o = o;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#log = (options.logger ?? silentLogger).child({
      lease: `${options.namespace}/${options.name}`,
      identity: options.identity,
    });
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  /** The current leader's identity as last observed. */
  get leader(): string | undefined {
    return this.#leader;
  }

  get #path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.#o.namespace)}/leases/${encodeURIComponent(this.#o.name)}`;
  }

  /**
   * Campaign, lead, and campaign again after losing the lease, until `signal` aborts.
   *
   * @example
   * const elector = new LeaderElector({
   *   client,
   *   namespace: 'raven',
   *   name: 'raven-translator',
   *   identity: process.env.POD_NAME ?? 'raven-0',
   *   // `leading` aborts when the lease is lost: stop the work it started
   *   onStartedLeading: (leading) => runWorkers(queue, reconcile, { workers: 4, signal: leading }).finished,
   * });
   * await elector.run(signal);
   */
  async run(signal: AbortSignal): Promise<void> {
    for (;;) {
      const acquired = await this.#acquire(signal);
      if (!acquired) return;
      if (signal.aborted) {
        // The lease was taken as the signal aborted: give it back without starting any work,
        // since `onStartedLeading` must never get a signal that has already aborted.
        if (this.#o.releaseOnCancel !== false) await this.#release();
        return;
      }
      await this.#lead(signal);
    }
  }

  async #acquire(signal: AbortSignal): Promise<boolean> {
    for (;;) {
      if (signal.aborted) return false;
      if (await this.#tryAcquireOrRenew(signal)) return true;
      try {
        await sleep(this.#clock, this.#o.retryPeriodMs * (1 + (JITTER - 1) * this.#random()), signal);
      } catch {
        return false;
      }
    }
  }

  async #lead(signal: AbortSignal): Promise<void> {
    const leadership = new AbortController();
    const onAbort = (): void => leadership.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    this.#leading = true;
    this.#log.info({}, 'started leading');
    const term: LeaderTerm = { epoch: this.#observed?.lease.spec?.leaseTransitions ?? 0 };
    // Called now, not on a later microtask: nothing can abort `leadership` before the work has
    // seen it live and subscribed.
    const work = (async () => this.#o.onStartedLeading(leadership.signal, term))().catch((err: unknown) => {
      this.#log.error({ err: err instanceof Error ? err.message : String(err) }, 'leader work failed');
    });
    let lastRenew = this.#clock.now();
    try {
      while (!signal.aborted) {
        try {
          await sleep(this.#clock, this.#o.retryPeriodMs, signal);
        } catch {
          break;
        }
        // Each renewal attempt may take at most what is left of the renew deadline.
        if (await this.#tryAcquireOrRenew(signal, lastRenew + this.#o.renewDeadlineMs)) {
          lastRenew = this.#clock.now();
          continue;
        }
        if (this.#clock.now() - lastRenew >= this.#o.renewDeadlineMs) {
          this.#log.warn({}, 'could not renew the lease within the renew deadline; stopping');
          break;
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#leading = false;
      leadership.abort(new Error('leadership ended'));
      await work;
      if (signal.aborted && this.#o.releaseOnCancel !== false) await this.#release();
      this.#o.onStoppedLeading?.();
      this.#log.info({}, 'stopped leading');
    }
  }

  /** One attempt; `deadline` bounds the attempt's duration on the clock. */
  async #tryAcquireOrRenew(signal: AbortSignal, deadline?: number): Promise<boolean> {
    const controller = new AbortController();
    const forward = (): void => controller.abort(signal.reason);
    signal.addEventListener('abort', forward, { once: true });
    const timer =
      deadline === undefined
        ? undefined
        : this.#clock.setTimeout(
            () => controller.abort(new Error('renew deadline')),
            Math.max(0, deadline - this.#clock.now()),
          );
    try {
      return await this.#attempt(controller.signal);
    } catch (err) {
      if (!signal.aborted)
        this.#log.warn({ err: err instanceof Error ? err.message : String(err) }, 'lease request failed');
      return false;
    } finally {
      if (timer !== undefined) this.#clock.clearTimeout(timer);
      signal.removeEventListener('abort', forward);
    }
  }

  async #attempt(signal: AbortSignal): Promise<boolean> {
    const now = this.#clock.now();
    const me = this.#o.identity;
    let current: Lease | undefined;
    try {
      current = await this.#o.client.request<Lease>({ method: 'GET', path: this.#path, signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (current === undefined) {
      try {
        const created = await this.#o.client.request<Lease>({
          method: 'POST',
          path: this.#path.slice(0, this.#path.lastIndexOf('/')),
          body: this.#record(undefined, now),
          signal,
        });
        this.#observe(created, now);
        return true;
      } catch (err) {
        if (isAlreadyExists(err) || isConflict(err)) return false;
        throw err;
      }
    }
    this.#observe(current, now);
    const holder = current.spec?.holderIdentity ?? '';
    const observedAt = this.#observed?.at ?? now;
    const durationMs = (current.spec?.leaseDurationSeconds ?? this.#o.leaseDurationMs / 1000) * 1000;
    if (holder !== '' && holder !== me && now < observedAt + durationMs) return false;
    try {
      const updated = await this.#o.client.request<Lease>({
        method: 'PUT',
        path: this.#path,
        body: this.#record(current, now),
        signal,
      });
      this.#observe(updated, now);
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }

  #record(current: Lease | undefined, now: number): Lease {
    const me = this.#o.identity;
    const holder = current?.spec?.holderIdentity ?? '';
    const transitions = current?.spec?.leaseTransitions ?? 0;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...current?.metadata, name: this.#o.name, namespace: this.#o.namespace },
      spec: {
        holderIdentity: me,
        leaseDurationSeconds: Math.ceil(this.#o.leaseDurationMs / 1000),
        acquireTime: holder === me ? (current?.spec?.acquireTime ?? microTime(now)) : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: current === undefined ? 0 : holder === me ? transitions : transitions + 1,
      },
    };
  }

  /** Remember when the lease record last changed, on our own clock. */
  #observe(lease: Lease, now: number): void {
    const before = this.#observed?.lease;
    const changed =
      before === undefined ||
      before.spec?.holderIdentity !== lease.spec?.holderIdentity ||
      before.spec?.renewTime !== lease.spec?.renewTime ||
      before.metadata?.resourceVersion !== lease.metadata?.resourceVersion;
    if (changed) this.#observed = { lease, at: now };
    const holder = lease.spec?.holderIdentity ?? '';
    if (holder !== '' && holder !== this.#leader) {
      this.#leader = holder;
      this.#o.onNewLeader?.(holder);
    }
  }

  /**
   * Give the lease up so a successor need not wait for it to expire. A renewal cut short by the
   * shutdown may still have reached the server, so the lease we saw last can be one version
   * behind: a conflict is answered by reading the lease again and, while it is still ours,
   * releasing that version (once).
   */
  async #release(): Promise<void> {
    let lease = this.#observed?.lease;
    for (let attempt = 1; lease?.spec?.holderIdentity === this.#o.identity; attempt++) {
      const now = this.#clock.now();
      try {
        const released = await this.#o.client.request<Lease>({
          method: 'PUT',
          path: this.#path,
          body: {
            ...lease,
            spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(now) },
          },
        });
        this.#observe(released, now);
        this.#leader = undefined;
        this.#log.info({}, 'released the lease');
        return;
      } catch (err) {
        let failure: unknown = err;
        if (attempt === 1 && isConflict(err)) {
          try {
            lease = await this.#o.client.request<Lease>({ method: 'GET', path: this.#path });
            continue;
          } catch (readError) {
            failure = readError;
          }
        }
        this.#log.warn(
          { err: failure instanceof Error ? failure.message : String(failure) },
          'could not release the lease',
        );
        return;
      }
    }
  }
}

/** Kubernetes MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
