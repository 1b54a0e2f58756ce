/**
 * The chaos run's faults, made on the real parts: replicas stopped by signal and started again or
 * joining (ReplicaPool), the webhook receiver down, slow, answering 503 or hanging (HttpReceiver),
 * the apiserver restarted and etcd compacted (ControlPlane), PostgreSQL restarted (its
 * TestServer), and TCP resets and a half-open stall between Raven and the apiserver (TcpProxy).
 *
 * Why a proxy: a reset of an established connection, or a connection that stays open while
 * nothing flows (a half-open peer, a dead NAT entry), cannot be had on demand from the real
 * apiserver; the replicas' kubeconfig points at a local TCP proxy in front of it that can cut or
 * stall every connection it carries. The driver and the checker talk to the apiserver directly.
 *
 * Each lane of the schedule runs its faults one after the other, at their times or as soon after
 * as the one before has healed; the lanes run at the same time. Every fault's start and end go to
 * the timeline of the report.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { ControlPlane } from '../harness/control-plane.js';
import type { HttpReceiver } from '../harness/http-receiver.js';
import type { PostgresServer } from '../harness/postgres-server.js';
import type { TcpProxy } from '../harness/tcp-proxy.js';
import type { ReplicaPool } from './replicas.js';
import type { Fault, Timed } from './schedule.js';

/** How long a hanging receiver holds a request: longer than the sink's timeout, so it gives up. */
const HANG_MS = 60_000;
/** How slow a slow receiver answers: under the sink's timeout. */
const SLOW_MS = 1500;

export interface TimelineEntry {
  fault: Fault;
  /** Planned offset (ms from the start of the operations). */
  atMs: number;
  startedAt: number;
  endedAt?: number;
  error?: string;
  /** The revision etcd was compacted at, for a fault that compacts it. */
  compactedAt?: string;
}

export interface FaultWorld {
  plane: ControlPlane;
  postgres: PostgresServer;
  receiver: HttpReceiver;
  proxy: TcpProxy;
  replicas: ReplicaPool;
  log: (line: string) => void;
}

/** Times an apiserver restart is tried when the new apiserver cannot start. */
const RESTART_TRIES = 5;

export class FaultRunner {
  readonly timeline: TimelineEntry[] = [];
  /** Faults that restart the apiserver, one at a time across lanes. */
  #apiserver: Promise<void> = Promise.resolve();

  constructor(private readonly world: FaultWorld) {}

  /** Run the faults of every lane; resolves when all have healed. */
  async run(faults: readonly Timed<Fault>[], start: number): Promise<void> {
    const lanes = new Map<string, Timed<Fault>[]>();
    for (const f of faults) lanes.set(f.item.lane, [...(lanes.get(f.item.lane) ?? []), f]);
    await Promise.all([...lanes.values()].map((lane) => this.#lane(lane, start)));
  }

  async #lane(faults: readonly Timed<Fault>[], start: number): Promise<void> {
    for (const { atMs, item } of faults) {
      const wait = start + atMs - Date.now();
      if (wait > 0) await delay(wait);
      const entry: TimelineEntry = { fault: item, atMs, startedAt: Date.now() };
      this.timeline.push(entry);
      this.world.log(`fault: ${describe(item)}`);
      try {
        await this.#make(item, entry);
      } catch (err) {
        entry.error = err instanceof Error ? err.message : String(err);
        this.world.log(`fault ${item.kind} failed: ${entry.error.split('\n')[0] ?? ''}`);
      }
      entry.endedAt = Date.now();
    }
  }

  async #make(fault: Fault, entry: TimelineEntry): Promise<void> {
    const { postgres, receiver, proxy, replicas } = this.world;
    switch (fault.kind) {
      case 'stop': {
        const stoppedAt = Date.now();
        await replicas.stop(fault.replica, fault.signal);
        if (!fault.rejoin) return;
        await delay(Math.max(0, stoppedAt + fault.downMs - Date.now()));
        replicas.start(fault.replica);
        return;
      }
      case 'join':
        replicas.start(fault.replica);
        return;
      case 'compaction-while-down': {
        // Every replica down, changes go on, their history is compacted and the apiserver's watch
        // cache emptied: the replicas' resume points have expired when they come back.
        const identities = replicas.running();
        await replicas.stopAll('SIGKILL');
        await delay(fault.downMs / 2);
        await this.#compactAndRestart(entry);
        await delay(fault.downMs / 2);
        for (const id of identities) replicas.start(id);
        return;
      }
      case 'receiver-down':
        await receiver.down();
        await delay(fault.forMs);
        await receiver.up();
        return;
      case 'receiver-slow':
        receiver.slow(SLOW_MS);
        await delay(fault.forMs);
        receiver.slow(0);
        return;
      case 'receiver-5xx':
        receiver.fallback = { status: 503, body: 'chaos: unavailable' };
        await delay(fault.forMs);
        receiver.fallback = { status: 200 };
        return;
      case 'receiver-hang':
        receiver.fallback = { status: 200, delayMs: HANG_MS };
        await delay(fault.forMs);
        receiver.fallback = { status: 200 };
        return;
      case 'apiserver-restart':
        await this.#restartApiserver(fault.downMs);
        return;
      case 'compaction':
        await this.#compactAndRestart(entry);
        return;
      case 'tcp-reset':
        proxy.cut();
        return;
      case 'stall':
        proxy.stall();
        await delay(fault.forMs);
        proxy.resume();
        return;
      case 'postgres-restart':
        await postgres.down();
        await delay(fault.downMs);
        await postgres.up();
        return;
    }
  }

  /**
   * Compact etcd at its newest revision and restart the apiserver. A running watch resumes from
   * the apiserver's watch cache, which a compaction of etcd alone does not touch: the restart
   * empties it, so a resume from before the compaction meets 410.
   */
  #compactAndRestart(entry: TimelineEntry): Promise<void> {
    return this.#restartApiserver(0, entry);
  }

  /**
   * Restart the apiserver (one restart at a time). The proxy resets the replicas' connections
   * meanwhile, as a stopped apiserver would refuse them: a client reconnecting on loopback in a
   * tight loop can be given the apiserver's own port as its local port (a TCP self-connect) and
   * hold it when the new apiserver binds. A start that fails so is tried again.
   */
  #restartApiserver(downMs: number, compacted?: TimelineEntry): Promise<void> {
    const { plane, proxy, log } = this.world;
    const restart = async (): Promise<void> => {
      if (compacted !== undefined) {
        compacted.compactedAt = await plane.compactEtcd();
        log(`etcd compacted at revision ${compacted.compactedAt}`);
      }
      proxy.refuse();
      proxy.cut();
      try {
        for (let attempt = 1; ; attempt++) {
          try {
            await plane.restartApiserver({ downMs: attempt === 1 ? downMs : 1000 });
            return;
          } catch (err) {
            if (attempt >= RESTART_TRIES) throw err;
            log(`the apiserver did not start (${String(err).split('\n')[0] ?? ''}); again`);
          }
        }
      } finally {
        proxy.accept();
      }
    };
    const done = this.#apiserver.then(restart);
    this.#apiserver = done.catch(() => undefined);
    return done;
  }
}

export function describe(fault: Fault): string {
  switch (fault.kind) {
    case 'stop':
      return `${fault.signal} ${fault.replica}${fault.rejoin ? `, back after ${fault.downMs} ms` : ', for good'}`;
    case 'join':
      return `${fault.replica} joins`;
    case 'compaction-while-down':
      return `every replica SIGKILLed, etcd compacted and the apiserver restarted, back after ${fault.downMs} ms`;
    case 'receiver-down':
    case 'receiver-slow':
    case 'receiver-5xx':
    case 'receiver-hang':
    case 'stall':
      return `${fault.kind} for ${fault.forMs} ms`;
    case 'apiserver-restart':
    case 'postgres-restart':
      return `${fault.kind} (down ${fault.downMs} ms)`;
    case 'compaction':
      return 'etcd compacted and the apiserver restarted';
    case 'tcp-reset':
      return 'every connection to the apiserver reset';
  }
}
