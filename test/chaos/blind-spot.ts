/**
 * How long each part of the work went unwatched around each planned join or leave and each crash,
 * read from the replicas' own log lines (pino's `time`, ms) and the times the run stopped them.
 *
 * A part is watched by a replica from the moment all its watchers logged `synced` after it
 * started work on that part (`watching this replica’s parts of the hash space` when sharded,
 * `started leading` under leader election, the start of the process otherwise) until that work
 * stopped: its next assignment, `stopped leading`, a restart of its work, or the end of the
 * process (the SIGKILL's time, or its exit after SIGTERM). In failover and single mode the whole
 * work is one part. A stretch of time in which nobody watched a part is a blind spot. It is
 * blamed on what ended the watching before it: when that was the end of a process, the last fault
 * that stopped that replica (or every replica); otherwise (the members changed, so the work
 * moved) the last fault that began before the stretch.
 */
export interface ReplicaLog {
  identity: string;
  /** Log lines: `msg`, `time` and `parts` where present. */
  lines: readonly { msg: string; time?: number; parts?: number[] }[];
  startedAt: number;
  /** When the process ended (SIGKILL sent, or exited), or undefined while it still runs. */
  endedAt?: number;
}

export interface ReplicaFault {
  kind: string;
  /** The replica it stopped; `*` for every replica. */
  replica?: string;
  at: number;
}

export interface BlindSpot {
  part: number;
  from: number;
  ms: number;
  /** The fault blamed (index into the faults given), or -1 when none came before it. */
  fault: number;
}

export interface BlindSpotSummary {
  n: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

const MSG = {
  watching: 'watching this replica’s parts of the hash space',
  nothing: 'no part of the hash space is this replica’s: watching nothing',
  restart: 'the work on this replica’s parts stopped; starting again',
  leading: 'started leading',
  stoppedLeading: 'stopped leading',
  synced: 'synced',
};

interface Interval {
  part: number;
  from: number;
  to: number;
  identity: string;
  /** The watching ended with the process (not a new assignment or a loss of the lead). */
  exit: boolean;
}

/** The intervals in which `log` watched each of its parts. */
export function watchedIntervals(
  log: ReplicaLog,
  mode: 'single' | 'failover' | 'sharded',
  watchers: number,
): Interval[] {
  const end = log.endedAt ?? Number.POSITIVE_INFINITY;
  const out: Interval[] = [];
  let current: { parts: number[]; since: number; synced: number } | undefined;
  const close = (at: number, exit = false): void => {
    if (current !== undefined && current.synced >= watchers) {
      for (const part of current.parts)
        out.push({ part, from: current.since, to: at, identity: log.identity, exit });
    }
    current = undefined;
  };
  if (mode === 'single') current = { parts: [0], since: Number.POSITIVE_INFINITY, synced: 0 };
  for (const line of log.lines) {
    const at = line.time ?? log.startedAt;
    if (at > end) break;
    if (mode === 'sharded' && line.msg === MSG.watching) {
      close(at);
      current = { parts: line.parts ?? [], since: Number.POSITIVE_INFINITY, synced: 0 };
    } else if (mode === 'failover' && line.msg === MSG.leading) {
      close(at);
      current = { parts: [0], since: Number.POSITIVE_INFINITY, synced: 0 };
    } else if (line.msg === MSG.nothing || line.msg === MSG.restart || line.msg === MSG.stoppedLeading)
      close(at);
    else if (line.msg === MSG.synced && current !== undefined) {
      current.synced++;
      if (current.synced === watchers) current.since = at;
    }
  }
  close(end, log.endedAt !== undefined);
  return out.filter((i) => i.to > i.from);
}

/**
 * The unwatched stretches of each part between `from` (every part watched) and `to`, each blamed
 * on the last fault that began before it (up to a second after, for a fault logged late).
 */
export function blindSpots(
  logs: readonly ReplicaLog[],
  mode: 'single' | 'failover' | 'sharded',
  options: { watchers: number; parts: number; from: number; to: number; faults: readonly ReplicaFault[] },
): BlindSpot[] {
  const intervals = logs.flatMap((l) => watchedIntervals(l, mode, options.watchers));
  const spots: BlindSpot[] = [];
  const parts = mode === 'sharded' ? options.parts : 1;
  for (let part = 0; part < parts; part++) {
    const mine = intervals.filter((i) => i.part === part).sort((a, b) => a.from - b.from);
    let coveredTo = options.from;
    let last: Interval | undefined;
    const emit = (from: number, to: number): void => {
      if (to <= from) return;
      let fault = -1;
      for (const [index, f] of options.faults.entries()) {
        const stoppedIt = f.replica === '*' || f.replica === last?.identity;
        if (f.at <= from + 1000 && (last?.exit !== true || stoppedIt)) fault = index;
      }
      spots.push({ part, from, ms: to - from, fault });
    };
    for (const i of mine) {
      if (i.to <= coveredTo) continue;
      if (i.from > coveredTo) emit(coveredTo, Math.min(i.from, options.to));
      if (i.to > coveredTo) last = i;
      coveredTo = Math.max(coveredTo, i.to);
      if (coveredTo >= options.to) break;
    }
    if (coveredTo < options.to) emit(coveredTo, options.to);
  }
  return spots;
}

/** p50, p99 and the largest of a set of durations (nearest rank). */
export function summarize(ms: readonly number[]): BlindSpotSummary {
  const sorted = [...ms].sort((a, b) => a - b);
  const rank = (p: number): number => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
  return { n: sorted.length, p50Ms: rank(50), p99Ms: rank(99), maxMs: sorted.at(-1) ?? 0 };
}
