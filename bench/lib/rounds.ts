/**
 * Interleaved rounds and what to report from them. Every round runs each contestant once, in a
 * fresh process, in an order rotated each round (no contestant always runs first or last), so
 * contestants of one round share the machine's load of the moment. Ratios are taken per round
 * (this contestant's run over that one's, in the same round), and their median and range reported:
 * steadier than a ratio of medians on a machine shared with other work.
 */
import { loadavg } from 'node:os';
import { ratio, table } from './report.js';

export interface Rounds<R> {
  /** By contestant name: one entry per round, undefined when that run failed. */
  runs: Map<string, (R | undefined)[]>;
  failures: Map<string, string[]>;
  /** The 1-minute load average when each run started. */
  load: number[];
}

export async function runRounds<R, C extends { name: string }>(
  chosen: readonly C[],
  rounds: number,
  runOne: (contestant: C, round: number) => Promise<{ ok: true; value: R } | { ok: false; error: string }>,
  log: (contestant: C, round: number, outcome: { ok: true; value: R } | { ok: false; error: string }) => void,
): Promise<Rounds<R>> {
  const runs = new Map(chosen.map((c) => [c.name, [] as (R | undefined)[]]));
  const failures = new Map(chosen.map((c) => [c.name, [] as string[]]));
  const load: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = chosen.map((_, i) => chosen[(i + round) % chosen.length]) as C[];
    for (const contestant of order) {
      load.push(loadavg()[0] ?? 0);
      const outcome = await runOne(contestant, round);
      runs.get(contestant.name)?.push(outcome.ok ? outcome.value : undefined);
      if (!outcome.ok) failures.get(contestant.name)?.push(outcome.error);
      log(contestant, round, outcome);
    }
  }
  return { runs, failures, load };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** The values of one field over the successful runs. */
export function values<R>(rounds: Rounds<R>, name: string, pick: (r: R) => number): number[] {
  return (rounds.runs.get(name) ?? []).filter((r): r is R => r !== undefined).map(pick);
}

/** Per-round ratios of `a` over `b` (rounds where both succeeded). */
export function roundRatios<R>(rounds: Rounds<R>, a: string, b: string, pick: (r: R) => number): number[] {
  const ra = rounds.runs.get(a) ?? [];
  const rb = rounds.runs.get(b) ?? [];
  const out: number[] = [];
  ra.forEach((x, i) => {
    const y = rb[i];
    if (x !== undefined && y !== undefined && pick(y) > 0) out.push(pick(x) / pick(y));
  });
  return out;
}

/** `1.02x (0.97–1.10)`: the median and range of ratios. */
export function ratioSpread(ratios: readonly number[]): string {
  if (ratios.length === 0) return 'n/a';
  const lo = Math.min(...ratios);
  const hi = Math.max(...ratios);
  return `${ratio(median(ratios))} (${lo.toFixed(2)}–${hi.toFixed(2)})`;
}

/** `1234 (1100–1400)`: the median and range of values. */
export function spread(xs: readonly number[], digits = 0): string {
  if (xs.length === 0) return 'n/a';
  const f = (n: number): string => n.toFixed(digits);
  return `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;
}

/** The load average over the runs: median and range. */
export function loadSummary(load: readonly number[]): string {
  return `load average (1 min) at the start of each run: median ${spread(load, 1)}`;
}

/** The CPU and peak RSS of each contestant, as measured by `Meter`, against `baseline`. */
export function cpuRssTable<R extends { cpuMs: number; peakRssMb: number; ms: number }>(
  rounds: Rounds<R>,
  names: readonly string[],
  baseline: string,
): string {
  const cpu = (r: R): number => r.cpuMs;
  const rss = (r: R): number => r.peakRssMb;
  const rows = names.map((name) => {
    const ok = values(rounds, name, cpu).length;
    const failed = rounds.failures.get(name)?.length ?? 0;
    return [
      `\`${name}\``,
      spread(values(rounds, name, cpu)),
      ratioSpread(roundRatios(rounds, name, baseline, cpu)),
      spread(values(rounds, name, (r) => r.ms)),
      spread(values(rounds, name, rss)),
      ratioSpread(roundRatios(rounds, name, baseline, rss)),
      failed === 0 ? String(ok) : `${ok} (${failed} failed)`,
    ];
  });
  return table(
    [
      'contestant',
      'CPU ms: median (range)',
      `CPU ÷ ${baseline}`,
      'wall ms',
      'peak RSS MiB',
      `RSS ÷ ${baseline}`,
      'runs',
    ],
    rows,
  );
}

export interface Goal {
  label: string;
  ratios: number[];
  target: string;
  met: (median: number) => boolean;
}

/** Each goal with its per-round ratios: median and range, the target, met or not. */
export function goalsTable(goals: readonly Goal[]): string {
  const rows = goals
    .filter((g) => g.ratios.length > 0)
    .map((g) => [g.label, ratioSpread(g.ratios), g.target, g.met(median(g.ratios)) ? 'met' : 'not met']);
  return table(['goal', 'measured: median (range)', 'target', ''], rows);
}

/** The failed runs, as a Markdown list (empty when none failed). */
export function failureLines<R>(rounds: Rounds<R>): string[] {
  const lines = [...rounds.failures].flatMap(([name, errors]) => errors.map((e) => `- \`${name}\`: ${e}`));
  return lines.length === 0 ? [] : ['', 'Failed runs:', '', ...lines];
}
