/**
 * The chaos run's generator: one seed, mode and duration give one schedule, the same every time
 * (the one place where the run's randomness is drawn). A schedule is two timelines:
 *
 * - operations on ConfigMaps, made one after the other by one driver: create, update data, update
 *   labels (moving an object in or out of the `chaos/in=yes` selector one watcher uses), delete,
 *   delete then re-create the same name (a new uid), delete and re-create a whole namespace, and
 *   objects near 1 MiB. A model of what exists keeps every operation valid when it is made.
 * - faults, in three lanes that run at the same time (each lane one fault after the other):
 *   `replicas` (SIGKILL, SIGTERM, joins, compaction while every replica is down), `receiver`
 *   (down, slow, 5xx, hanging) and `infra` (apiserver restart, compaction while running, TCP
 *   resets and a half-open stall between Raven and the apiserver, a PostgreSQL restart).
 *
 * The times are offsets from the start of the operations; a run makes them as close as it can, so
 * the schedule reproduces exactly and the interleaving with the processes closely.
 */
import { Prng } from './prng.js';

export type Mode = 'single' | 'failover' | 'sharded';
export const MODES: readonly Mode[] = ['single', 'failover', 'sharded'];

/** The label the selector watcher uses: `chaos/in=yes` is in, anything else (or none) is out. */
export const SELECTOR_LABEL = 'chaos/in';
export const SELECTOR = `${SELECTOR_LABEL}=yes`;

/** Bytes of data in a big object: near the 1 MiB an object may have in etcd. */
export const BIG_BYTES = 900_000;

export type Labels = Record<string, string>;

export type Op =
  | { kind: 'create'; ns: string; name: string; labels: Labels; bytes: number }
  | { kind: 'update-data'; ns: string; name: string; bytes: number }
  | { kind: 'update-labels'; ns: string; name: string; labels: Labels }
  | { kind: 'delete'; ns: string; name: string }
  | { kind: 'recreate'; ns: string; name: string; labels: Labels; bytes: number }
  | { kind: 'recreate-namespace'; ns: string };

export type Fault =
  | {
      lane: 'replicas';
      kind: 'stop';
      signal: 'SIGKILL' | 'SIGTERM';
      replica: string;
      downMs: number;
      rejoin: boolean;
    }
  | { lane: 'replicas'; kind: 'join'; replica: string }
  | { lane: 'replicas'; kind: 'compaction-while-down'; downMs: number }
  | {
      lane: 'receiver';
      kind: 'receiver-down' | 'receiver-slow' | 'receiver-5xx' | 'receiver-hang';
      forMs: number;
    }
  | { lane: 'infra'; kind: 'apiserver-restart'; downMs: number }
  | { lane: 'infra'; kind: 'compaction' }
  | { lane: 'infra'; kind: 'tcp-reset' }
  | { lane: 'infra'; kind: 'stall'; forMs: number }
  | { lane: 'infra'; kind: 'postgres-restart'; downMs: number };

export type FaultKind = Fault['kind'];

export interface Timed<T> {
  atMs: number;
  item: T;
}

export interface Schedule {
  seed: number;
  mode: Mode;
  durationMs: number;
  /** The namespaces the watchers watch (the second may be deleted and re-created). */
  namespaces: [string, string];
  /** Where the Leases of leader election or sharding live. */
  controlNamespace: string;
  /** The replicas started before the operations begin. */
  initialReplicas: string[];
  ops: Timed<Op>[];
  faults: Timed<Fault>[];
}

export interface ScheduleOptions {
  seed: number;
  mode: Mode;
  durationS: number;
  /** Faults to leave out (for a run that cannot produce them). */
  exclude?: readonly FaultKind[];
}

/** Operations per second the driver is asked to make. */
const OPS_PER_SECOND = 6;
/** Names per namespace: few enough that names are deleted and re-created often. */
const NAMES = 30;
const MAX_BIG = 3;
const MAX_REPLICAS = 4;

const OP_WEIGHTS = {
  create: 25,
  'update-data': 30,
  'update-labels': 15,
  delete: 10,
  recreate: 12,
  big: 2,
} as const;

export function generateSchedule(options: ScheduleOptions): Schedule {
  const { seed, mode } = options;
  const rng = new Prng(seed);
  const durationMs = Math.round(options.durationS * 1000);
  const namespaces: [string, string] = [`chaos-${seed}-a`, `chaos-${seed}-b`];
  const initialReplicas =
    mode === 'single' ? ['r0'] : mode === 'failover' ? ['r0', 'r1'] : ['r0', 'r1', 'r2'];
  return {
    seed,
    mode,
    durationMs,
    namespaces,
    controlNamespace: `chaos-${seed}-leases`,
    initialReplicas,
    ops: generateOps(rng, durationMs, namespaces),
    faults: generateFaults(rng, mode, durationMs, initialReplicas, new Set(options.exclude ?? [])),
  };
}

function generateOps(rng: Prng, durationMs: number, namespaces: [string, string]): Timed<Op>[] {
  const model = new Map<string, Map<string, Labels>>(namespaces.map((ns) => [ns, new Map()]));
  const ops: Timed<Op>[] = [];
  const count = Math.floor((durationMs / 1000) * OPS_PER_SECOND);
  // One namespace re-creation per run of 30 s or more, in its middle half.
  const nsAt = durationMs >= 30_000 ? rng.int(Math.floor(count / 4), Math.floor((count * 3) / 4)) : -1;
  let big = 0;
  const labels = (): Labels => (rng.chance(0.5) ? { [SELECTOR_LABEL]: rng.pick(['yes', 'no']) } : {});
  const bytes = (): number => rng.int(10, 300);
  for (let i = 0; i < count; i++) {
    const atMs = Math.round((i * 1000) / OPS_PER_SECOND);
    const ns = rng.pick(namespaces);
    const objects = model.get(ns) ?? new Map<string, Labels>();
    if (i === nsAt) {
      ops.push({ atMs, item: { kind: 'recreate-namespace', ns: namespaces[1] } });
      model.set(namespaces[1], new Map());
      continue;
    }
    const free = [...Array(NAMES).keys()].map((n) => `cm-${n}`).filter((name) => !objects.has(name));
    const existing = [...objects.keys()].sort();
    let kind = rng.weighted(OP_WEIGHTS);
    if (kind === 'big' && big >= MAX_BIG) kind = 'update-data';
    if (existing.length === 0 || (kind === 'create' && free.length > 0)) {
      const name = rng.pick(free.length > 0 ? free : existing);
      const l = labels();
      ops.push({ atMs, item: { kind: 'create', ns, name, labels: l, bytes: bytes() } });
      objects.set(name, l);
      continue;
    }
    const name = rng.pick(existing);
    switch (kind) {
      case 'create':
      case 'update-data':
        ops.push({ atMs, item: { kind: 'update-data', ns, name, bytes: bytes() } });
        break;
      case 'big':
        big++;
        ops.push({ atMs, item: { kind: 'update-data', ns, name, bytes: BIG_BYTES } });
        break;
      case 'update-labels': {
        const l = labels();
        ops.push({ atMs, item: { kind: 'update-labels', ns, name, labels: l } });
        objects.set(name, l);
        break;
      }
      case 'delete':
        ops.push({ atMs, item: { kind: 'delete', ns, name } });
        objects.delete(name);
        break;
      case 'recreate': {
        const l = labels();
        ops.push({ atMs, item: { kind: 'recreate', ns, name, labels: l, bytes: bytes() } });
        objects.set(name, l);
        break;
      }
    }
  }
  return ops;
}

function generateFaults(
  rng: Prng,
  mode: Mode,
  durationMs: number,
  initialReplicas: readonly string[],
  exclude: ReadonlySet<FaultKind>,
): Timed<Fault>[] {
  const faults: Timed<Fault>[] = [];
  // Faults start in the first 80% of the run, so that the last of them heal while changes go on.
  const last = durationMs * 0.8;
  const allowed = (kind: FaultKind): boolean => !exclude.has(kind);

  // Replicas: who is running is modelled, so that a stop always has a running target.
  const running = new Set(initialReplicas);
  let next = initialReplicas.length;
  // One stop of every replica per run: the apiserver restart it takes is slow on a busy machine.
  let downAlready = false;
  for (let at = rng.int(3000, 8000); at < last;) {
    const choices: Partial<Record<'stop' | 'join' | 'compaction-while-down', number>> = {};
    if (allowed('stop') && running.size > 0) choices.stop = 5;
    if (allowed('join') && mode === 'sharded' && running.size < MAX_REPLICAS) choices.join = 3;
    if (allowed('compaction-while-down') && !downAlready) choices['compaction-while-down'] = 1;
    if (Object.keys(choices).length === 0) break;
    const kind = rng.weighted(choices);
    if (kind === 'join') {
      const replica = `r${next++}`;
      running.add(replica);
      faults.push({ atMs: at, item: { lane: 'replicas', kind: 'join', replica } });
      at += rng.int(2000, 10_000);
    } else if (kind === 'stop') {
      const replica = rng.pick([...running].sort());
      const signal = rng.chance(0.5) ? 'SIGKILL' : 'SIGTERM';
      // A sharded replica may leave for good while another runs; the only replica always returns.
      const rejoin = mode !== 'sharded' || running.size === 1 || rng.chance(0.5);
      const downMs = rng.int(2000, 12_000);
      if (!rejoin) running.delete(replica);
      faults.push({ atMs: at, item: { lane: 'replicas', kind: 'stop', signal, replica, downMs, rejoin } });
      at += (rejoin ? downMs : 0) + rng.int(2000, 8000);
    } else {
      const downMs = rng.int(3000, 8000);
      downAlready = true;
      faults.push({ atMs: at, item: { lane: 'replicas', kind: 'compaction-while-down', downMs } });
      at += downMs + rng.int(3000, 8000);
    }
  }

  const receiver = (['receiver-down', 'receiver-slow', 'receiver-5xx', 'receiver-hang'] as const).filter(
    allowed,
  );
  for (let at = rng.int(2000, 10_000); at < last && receiver.length > 0;) {
    const forMs = rng.int(2000, 15_000);
    faults.push({ atMs: at, item: { lane: 'receiver', kind: rng.pick(receiver), forMs } });
    at += forMs + rng.int(3000, 15_000);
  }

  const infra = (
    ['apiserver-restart', 'compaction', 'tcp-reset', 'stall', 'postgres-restart'] as const
  ).filter(allowed);
  for (let at = rng.int(5000, 15_000); at < last && infra.length > 0;) {
    const kind = rng.pick(infra);
    const fault: Fault =
      kind === 'apiserver-restart'
        ? { lane: 'infra', kind, downMs: rng.int(0, 3000) }
        : kind === 'stall'
          ? { lane: 'infra', kind, forMs: rng.int(5000, 30_000) }
          : kind === 'postgres-restart'
            ? { lane: 'infra', kind, downMs: rng.int(1000, 5000) }
            : { lane: 'infra', kind };
    faults.push({ atMs: at, item: fault });
    at += rng.int(15_000, 30_000) + ('forMs' in fault ? fault.forMs : 0);
  }
  return faults.sort((a, b) => a.atMs - b.atMs);
}
