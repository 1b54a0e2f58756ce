/**
 * Membership of a group of replicas, each holding a coordination.k8s.io/v1 Lease of its own
 * labelled with the group's name, so that every member knows the others' names: the input of
 * `assignHashSpace`, which splits the work among them with no other coordination.
 *
 * Guarantees, with the defaults (lease 15 s, renew deadline 10 s, retry 2 s):
 * - a member renews its Lease and lists the group's Leases every retry period; a member that
 *   cannot complete both within the renew deadline steps out (its `members` no longer include
 *   it) until it can again;
 * - another member counts as present while its Lease changed within its lease duration, as
 *   measured on this member's own clock since it last saw the Lease change (clocks of different
 *   machines are never compared): a member that crashed drops out a lease duration after its
 *   last renewal;
 * - a member that joins counts itself in only a lease duration after its Lease first stood, so
 *   that every member already in (whose view is never older than the renew deadline, which is
 *   shorter) has counted it in, and given up its share, before it takes that share;
 * - unless every other member said so sooner: a member whose work follows the group calls
 *   {@link LeaseGroup.settle} with the members its work now runs for, once it has given up the
 *   share that is no longer its own, and its Lease carries that view
 *   ({@link SETTLED_ANNOTATION}). A joining member counts itself in as soon as every other present
 *   member's settled view includes it; while it waits it reads the group every
 *   {@link JOIN_POLL_MS} instead of every retry period. A planned join then hands a share over in
 *   about a retry period plus the drain, instead of a lease duration. Members that never settle
 *   (or run an older version) keep the lease-duration wait;
 * - on shutdown (`run`'s signal aborts) a member steps out first, then deletes its Lease, so the
 *   others take over its share at their next retry instead of waiting out the lease;
 * - the Lease a crashed member leaves behind is deleted by the others once it has not changed
 *   for four lease durations (only if it still has not: the delete is conditional).
 *
 * Work handed over when the members change must therefore stop within the time the newcomer
 * waits: a lease duration less the retry period.
 */
import type { Lease, LeaseList } from 'kubernetes-types/coordination/v1.js';
import { isNotFound, isAlreadyExists, isConflict } from '../errors/classify.js';
import { RavenError } from '../errors/raven-error.js';
import { systemClock, sleep, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { fnv1a64Hex } from '../watch/shard/fnv1a64.js';
import { checkLeaseTimings, JITTER, microTime, type LeaseClient } from './leader-election.js';

/** The label that names a Lease's group. */
export const LEASE_GROUP_LABEL = 'raven.dev/lease-group';

export interface LeaseGroupOptions {
  client: LeaseClient;
  namespace: string;
  /** The group's name: a DNS label of at most 46 characters, e.g. `raven-shards`. */
  group: string;
  /** Unique per member, e.g. the pod's name. */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /**
   * The members changed: their identities, sorted, this member's among them while it is in.
   * Called once with the first complete view, then on every change.
   */
  onChange?: (members: readonly string[]) => void;
  clock?: Clock;
  random?: () => number;
  logger?: Logger;
}

/**
 * The annotation on a member's Lease that lists (comma-separated, sorted) the members its work
 * runs for: see {@link LeaseGroup.settle}.
 */
export const SETTLED_ANNOTATION = 'raven.dev/settled-members';

/**
 * How often a joining member reads the group while it waits to be acknowledged: short, so a
 * hand-over leaves a part unwatched well under the 2 s a planned join may take, and only for the
 * few seconds of a join (a list of the group's Leases each time).
 */
export const JOIN_POLL_MS = 250;

/** A Lease unchanged for this many of its lease durations belongs to a member long gone. */
const STALE_LEASES = 4;
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export class LeaseGroup {
  readonly #o: Required<Pick<LeaseGroupOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>> &
    LeaseGroupOptions;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #log: Logger;
  /** Each Lease seen, by name: its last record and when (on our clock) it last changed. */
  readonly #seen = new Map<string, { lease: Lease; at: number }>();
  #own: Lease | undefined;
  /** When our Lease first stood (our clock); a member counts itself in a lease duration later. */
  #joinedAt: number | undefined;
  #lastRound: number | undefined;
  #members: readonly string[] = [];
  #reported = false;
  /** The view to publish as settled (undefined: none yet), and who waits for it to stand. */
  #settled: string | undefined;
  #settleWaiters: { resolve: () => void }[] = [];
  /** Wakes the wait between rounds, for a settled view to be published at once. */
  #wake: AbortController | undefined;

  constructor(options: LeaseGroupOptions) {
    const o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...options };
    if (!GROUP.test(o.group) || o.group.length > 46)
      throw new RavenError(
        'ERR_INVALID_ARGUMENT',
        `group: expected a DNS label of at most 46 characters (a-z, 0-9, '-'), got ${JSON.stringify(o.group)}`,
      );
    if (o.identity === '')
      throw new RavenError('ERR_INVALID_ARGUMENT', 'identity: expected a non-empty name for this member');
    checkLeaseTimings(o);
    this.#o = o;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#log = (options.logger ?? silentLogger).child({
      leaseGroup: `${o.namespace}/${o.group}`,
      identity: o.identity,
    });
  }

  /** The members as last computed, sorted (empty before the first complete view). */
  get members(): readonly string[] {
    return this.#members;
  }

  /** This member's Lease's name: the group's name and a hash of the identity. */
  get leaseName(): string {
    return `${this.#o.group}-${fnv1a64Hex(this.#o.identity)}`;
  }

  get #collection(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.#o.namespace)}/leases`;
  }

  /**
   * Be a member until `signal` aborts; then step out and delete this member's Lease.
   *
   * @example
   * const group = new LeaseGroup({
   *   client,
   *   namespace: 'raven',
   *   group: 'raven-shards',
   *   identity: process.env.POD_NAME ?? 'raven-0',
   *   onChange: (members) => console.log('members', members),
   * });
   * await group.run(signal);
   */
  async run(signal: AbortSignal): Promise<void> {
    // Read through a call: the signal may abort during any await of the loop.
    const stopped = (): boolean => signal.aborted;
    try {
      while (!stopped()) {
        const renewed = await this.#round(signal);
        // A view settled during the round is published by another round at once.
        if (renewed && this.#settleWaiters.length > 0 && !stopped()) continue;
        const waiting = this.#joinedAt !== undefined && !this.#members.includes(this.#o.identity);
        const wake = new AbortController();
        this.#wake = wake;
        const forward = (): void => wake.abort(signal.reason);
        signal.addEventListener('abort', forward, { once: true });
        try {
          await sleep(
            this.#clock,
            waiting ? JOIN_POLL_MS : this.#o.retryPeriodMs * (1 + (JITTER - 1) * this.#random()),
            wake.signal,
          );
        } catch {
          if (stopped()) break;
        } finally {
          signal.removeEventListener('abort', forward);
          this.#wake = undefined;
        }
      }
    } finally {
      for (const waiter of this.#settleWaiters.splice(0)) waiter.resolve();
      this.#report(this.#members.filter((m) => m !== this.#o.identity));
      await this.#leave();
    }
  }

  /**
   * Say that this member's work now runs for `members` (the view its share was computed from): it
   * holds no part of another member's share in that view. Published on this member's Lease at
   * once; the promise resolves when the Lease carrying it stood (or the group stopped).
   *
   * @example
   * // The parts of the view this member no longer owns are drained; none new taken yet:
   * await group.settle(group.members);
   */
  settle(members: readonly string[]): Promise<void> {
    const view = [...members].sort().join(',');
    this.#settled = view;
    return new Promise<void>((resolve) => {
      this.#settleWaiters.push({ resolve });
      this.#wake?.abort(new Error('settled'));
    });
  }

  /** Renew our Lease and read the group's; `members` follows, or we step out past the deadline. */
  async #round(signal: AbortSignal): Promise<boolean> {
    const controller = new AbortController();
    const forward = (): void => controller.abort(signal.reason);
    signal.addEventListener('abort', forward, { once: true });
    const timer = this.#clock.setTimeout(
      () => controller.abort(new Error('renew deadline')),
      this.#o.renewDeadlineMs,
    );
    try {
      await this.#renew(controller.signal);
      const list = await this.#o.client.request<LeaseList>({
        method: 'GET',
        path: `${this.#collection}?labelSelector=${encodeURIComponent(`${LEASE_GROUP_LABEL}=${this.#o.group}`)}`,
        signal: controller.signal,
      });
      this.#lastRound = this.#clock.now();
      this.#report(this.#present(list.items));
      await this.#collect(controller.signal);
      return true;
    } catch (err) {
      if (signal.aborted) return false;
      this.#log.warn({ err: err instanceof Error ? err.message : String(err) }, 'lease group round failed');
      const now = this.#clock.now();
      if (this.#lastRound === undefined || now - this.#lastRound >= this.#o.renewDeadlineMs) {
        if (this.#members.includes(this.#o.identity))
          this.#log.warn({}, 'could not renew within the renew deadline; stepping out of the group');
        // The others may drop this member meanwhile and share out its part: coming back, it
        // waits a lease duration again before it counts itself in.
        this.#joinedAt = undefined;
        this.#report(this.#members.filter((m) => m !== this.#o.identity));
      }
      return false;
    } finally {
      this.#clock.clearTimeout(timer);
      signal.removeEventListener('abort', forward);
    }
  }

  async #renew(signal: AbortSignal): Promise<void> {
    const published = this.#settled;
    await this.#write(signal);
    // What was settled before is published too: the view published supersedes it.
    const done = this.#settled === published ? this.#settleWaiters.splice(0) : [];
    for (const waiter of done) waiter.resolve();
  }

  async #write(signal: AbortSignal): Promise<void> {
    const now = this.#clock.now();
    const settled = this.#settled;
    const record = (current: Lease | undefined): Lease => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        ...current?.metadata,
        name: this.leaseName,
        namespace: this.#o.namespace,
        labels: { ...current?.metadata?.labels, [LEASE_GROUP_LABEL]: this.#o.group },
        ...(settled === undefined
          ? {}
          : { annotations: { ...current?.metadata?.annotations, [SETTLED_ANNOTATION]: settled } }),
      },
      spec: {
        holderIdentity: this.#o.identity,
        leaseDurationSeconds: Math.ceil(this.#o.leaseDurationMs / 1000),
        acquireTime: current?.spec?.acquireTime ?? microTime(now),
        renewTime: microTime(now),
      },
    });
    const path = `${this.#collection}/${this.leaseName}`;
    if (this.#own !== undefined) {
      try {
        this.#own = await this.#o.client.request<Lease>({
          method: 'PUT',
          path,
          body: record(this.#own),
          signal,
        });
        this.#joinedAt ??= now;
        return;
      } catch (err) {
        // Someone else wrote it (a previous run of this member) or deleted it: read it again.
        if (!isConflict(err) && !isNotFound(err)) throw err;
        this.#own = undefined;
      }
    }
    let current: Lease | undefined;
    try {
      current = await this.#o.client.request<Lease>({ method: 'GET', path, signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      this.#own =
        current === undefined
          ? await this.#o.client.request<Lease>({
              method: 'POST',
              path: this.#collection,
              body: record(undefined),
              signal,
            })
          : await this.#o.client.request<Lease>({ method: 'PUT', path, body: record(current), signal });
    } catch (err) {
      if (isAlreadyExists(err) || isConflict(err))
        throw new Error(`lease ${this.leaseName} changed while renewing`);
      throw err;
    }
    // Counted from the first renewal that stood (a Lease left by an earlier run included): the
    // others may not have seen this member before.
    this.#joinedAt ??= now;
  }

  /** The members whose Leases are live, this member once it has been in for a lease duration. */
  #present(items: readonly Lease[]): string[] {
    const now = this.#clock.now();
    const names = new Set<string>();
    for (const lease of items) {
      const name = lease.metadata?.name ?? '';
      const before = this.#seen.get(name);
      if (
        before === undefined ||
        before.lease.metadata?.resourceVersion !== lease.metadata?.resourceVersion ||
        before.lease.spec?.renewTime !== lease.spec?.renewTime
      )
        this.#seen.set(name, { lease, at: now });
      names.add(name);
    }
    for (const name of this.#seen.keys()) if (!names.has(name)) this.#seen.delete(name);
    const members = new Set<string>();
    for (const [name, { lease, at }] of this.#seen) {
      const holder = lease.spec?.holderIdentity ?? '';
      if (holder === '' || name === this.leaseName) continue;
      const durationMs = (lease.spec?.leaseDurationSeconds ?? this.#o.leaseDurationMs / 1000) * 1000;
      if (now < at + durationMs) members.add(holder);
    }
    if (
      this.#joinedAt !== undefined &&
      (now - this.#joinedAt >= this.#o.leaseDurationMs || this.#acknowledged(now))
    )
      members.add(this.#o.identity);
    return [...members].sort();
  }

  /**
   * Whether every other present member's settled view counts this member in: each has given up
   * this member's share, so it may be taken now. A member that is in (counted itself in before)
   * stays in by this too.
   */
  #acknowledged(now: number): boolean {
    for (const [name, { lease, at }] of this.#seen) {
      const holder = lease.spec?.holderIdentity ?? '';
      if (holder === '' || name === this.leaseName) continue;
      const durationMs = (lease.spec?.leaseDurationSeconds ?? this.#o.leaseDurationMs / 1000) * 1000;
      if (now >= at + durationMs) continue;
      const settled = lease.metadata?.annotations?.[SETTLED_ANNOTATION];
      if (settled === undefined || !settled.split(',').includes(this.#o.identity)) return false;
    }
    return true;
  }

  /**
   * Delete the Leases of members long gone (unchanged for {@link STALE_LEASES} lease durations on
   * our clock: a crash leaves its Lease behind), each only if nobody renewed it meanwhile.
   */
  async #collect(signal: AbortSignal): Promise<void> {
    const now = this.#clock.now();
    for (const [name, { lease, at }] of this.#seen) {
      const durationMs = (lease.spec?.leaseDurationSeconds ?? this.#o.leaseDurationMs / 1000) * 1000;
      if (name === this.leaseName || now < at + STALE_LEASES * durationMs) continue;
      try {
        await this.#o.client.request({
          method: 'DELETE',
          path: `${this.#collection}/${encodeURIComponent(name)}`,
          body: {
            kind: 'DeleteOptions',
            apiVersion: 'v1',
            preconditions: { uid: lease.metadata?.uid, resourceVersion: lease.metadata?.resourceVersion },
          },
          signal,
        });
        this.#log.info(
          { lease: name, holder: lease.spec?.holderIdentity },
          'deleted a stale lease of the group',
        );
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) throw err;
      }
      this.#seen.delete(name);
    }
  }

  #report(members: string[]): void {
    const same =
      members.length === this.#members.length && members.every((member, i) => member === this.#members[i]);
    if (same && this.#reported) return;
    this.#members = members;
    this.#reported = true;
    this.#log.info({ members }, 'lease group members');
    try {
      this.#o.onChange?.(members);
    } catch (err) {
      // The caller's failure is not the group's: membership goes on.
      this.#log.error({ err: err instanceof Error ? err.message : String(err) }, 'onChange failed');
    }
  }

  async #leave(): Promise<void> {
    if (this.#own === undefined) return;
    try {
      await this.#o.client.request({
        method: 'DELETE',
        path: `${this.#collection}/${this.leaseName}`,
        body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: this.#own.metadata?.uid } },
      });
      this.#log.info({}, 'left the lease group');
    } catch (err) {
      if (!isNotFound(err))
        this.#log.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'could not delete the lease',
        );
    } finally {
      this.#own = undefined;
      this.#joinedAt = undefined;
    }
  }
}
