/**
 * The recovery results as Markdown: one table of seconds (median and range over the runs) and
 * connection attempts per minute per contestant, the ratios to Raven, and where Raven stands
 * against the goal issue 9 set. Deterministic: rows, columns and rounding are fixed.
 */
import { loadSummary, median } from '../lib/rounds.js';
import { machineLine, table } from '../lib/report.js';
import type { Contestant } from './contestants.js';
import { LAST_RESET_AFTER_MS, OUTAGE_MS, REFUSAL_MS, RESTART_DOWN_MS, type Measured } from './scenarios.js';
import { TICK_MS } from './ticker.js';

export type Results = Map<string, Map<string, { runs: Measured[]; failures: string[] }>>;

export interface ReportContext {
  nodeVersion: string;
  runs: number;
  stallCapS: number;
  resumeCapS: number;
  raven: string;
  contestants: readonly Contestant[];
  scenarios: readonly string[];
  /** The 1-minute load average as each round started. */
  load: readonly number[];
}

interface Row {
  scenario: string;
  /** Short, for the tables. */
  label: string;
  /** What exactly, for the list under the tables. */
  definition: string;
  pick: (m: Measured) => number | undefined;
  unit: 's' | 'per minute';
  /** The goal for Raven in this row, in seconds (worst run), if it sets one. */
  goalS?: number;
}

const s = (ms: number): number => ms / 1000;

const ROWS: readonly Row[] = [
  {
    scenario: 'refused-reset',
    label: `refused ${s(REFUSAL_MS)} s, then a reset`,
    definition: `new connections reset on accept and open ones cut for ${s(REFUSAL_MS)} s, accepted again, one more cut ${s(LAST_RESET_AFTER_MS)} s later; seconds from that last cut to resumed`,
    pick: (m) => m.resumedS,
    unit: 's',
    goalS: 2,
  },
  {
    scenario: 'refused-closed-port',
    label: `port closed ${s(REFUSAL_MS)} s, then a reset`,
    definition: `the same with the proxy's port closed (connection attempts fail with ECONNREFUSED) instead of resetting them; seconds from the last cut to resumed`,
    pick: (m) => m.resumedS,
    unit: 's',
    goalS: 2,
  },
  {
    scenario: 'outage-60s',
    label: `refused ${s(OUTAGE_MS)} s`,
    definition: `new connections reset on accept and open ones cut for ${s(OUTAGE_MS)} s; seconds from accepting again to resumed`,
    pick: (m) => m.resumedS,
    unit: 's',
    goalS: 2,
  },
  {
    scenario: 'apiserver-restart',
    label: `apiserver restart, ${s(RESTART_DOWN_MS)} s down`,
    definition: `kube-apiserver stopped (SIGTERM), started again ${s(RESTART_DOWN_MS)} s later (contestants connect straight to it); seconds from its /readyz answering 200 to resumed`,
    pick: (m) => m.resumedS,
    unit: 's',
    goalS: 2,
  },
  {
    scenario: 'half-open-stall',
    label: 'half-open stall: detected',
    definition:
      'every open connection held (no byte forwarded either way, sockets open), new ones forwarded; seconds from the stall to the first sign the contestant noticed: it closed a held connection or opened a new one',
    pick: (m) => m.detectedS,
    unit: 's',
    goalS: 45,
  },
  {
    scenario: 'half-open-stall',
    label: 'half-open stall: resumed',
    definition: 'the same stall; seconds from the stall to resumed',
    pick: (m) => m.resumedS,
    unit: 's',
  },
  {
    scenario: 'outage-60s',
    label: `refused ${s(OUTAGE_MS)} s: attempts per minute`,
    definition: `connection attempts the proxy reset during the ${s(OUTAGE_MS)} s outage, per minute (each attempt carries at least one request over TLS)`,
    pick: (m) => m.attemptsPerMinute,
    unit: 'per minute',
  },
];

/** Ties: medians this close count as tied (a few ticker periods). */
const TIE_S = 0.5;
/** Seconds below this count as this in ratios: the resolution of the measurement. */
const FLOOR_S = 0.1;

interface Summary {
  n: number;
  /** Runs that did not get there within the cap. */
  censored: number;
  median: number;
  min: number;
  max: number;
}

function summarise(values: (number | undefined)[]): Summary | undefined {
  if (values.length === 0) return undefined;
  const finite = values.map((v) => v ?? Number.POSITIVE_INFINITY);
  return {
    n: values.length,
    censored: values.filter((v) => v === undefined).length,
    median: median(finite),
    min: Math.min(...finite),
    max: Math.max(...finite),
  };
}

function capOf(row: Row, ctx: ReportContext): number {
  return row.scenario === 'half-open-stall' ? ctx.stallCapS : ctx.resumeCapS;
}

function cell(row: Row, summary: Summary | undefined, ctx: ReportContext): string {
  if (summary === undefined) return 'n/a';
  const cap = capOf(row, ctx);
  const v = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : `> ${cap}`);
  const range = v(summary.min) === v(summary.max) ? '' : ` (${v(summary.min)}–${v(summary.max)})`;
  const missed = summary.censored === 0 ? '' : `, ${summary.censored} of ${summary.n} not within ${cap} s`;
  return `${v(summary.median)}${range}${missed}`;
}

function ratioCell(row: Row, peer: Summary | undefined, raven: Summary | undefined, cap: number): string {
  if (peer === undefined || raven === undefined) return 'n/a';
  if (row.unit === 'per minute') {
    return raven.median > 0 ? `${(peer.median / raven.median).toFixed(2)}x` : 'n/a';
  }
  if (!Number.isFinite(raven.median)) return 'n/a';
  const r = Math.max(raven.median, FLOOR_S);
  // The peer's median is past the cap: the ratio is at least the cap's.
  if (!Number.isFinite(peer.median)) return `> ${(cap / r).toFixed(2)}x`;
  return `${(Math.max(peer.median, FLOOR_S) / r).toFixed(2)}x`;
}

const isRaven = (name: string): boolean => name.startsWith('raven-');

export function recoveryMarkdown(results: Results, ctx: ReportContext): string {
  const rows = ROWS.filter((r) => ctx.scenarios.includes(r.scenario));
  const names = ctx.contestants.map((c) => c.name);
  const summaries = new Map<Row, Map<string, Summary | undefined>>();
  for (const row of rows) {
    const slots = results.get(row.scenario);
    summaries.set(
      row,
      new Map(names.map((name) => [name, summarise((slots?.get(name)?.runs ?? []).map(row.pick))])),
    );
  }
  const get = (row: Row, name: string): Summary | undefined => summaries.get(row)?.get(name);

  const main = table(
    ['fault (seconds unless said)', ...names.map((n) => `\`${n}\``)],
    rows.map((row) => [row.label, ...names.map((name) => cell(row, get(row, name), ctx))]),
  );

  const ravens = names.filter(isRaven);
  const peers = names.filter((n) => !isRaven(n));
  const pairs = ravens.flatMap((r) => peers.map((p) => [r, p] as const));
  const ratios = table(
    ['fault', ...pairs.map(([r, p]) => `\`${p}\` / \`${r}\``)],
    rows.map((row) => [
      row.label,
      ...pairs.map(([r, p]) => ratioCell(row, get(row, p), get(row, r), capOf(row, ctx))),
    ]),
  );

  const goalRows = rows.filter((r) => r.unit === 's');
  const goal = table(
    ['fault', 'goal', ...ravens.map((r) => `\`${r}\``)],
    goalRows.map((row) => {
      const best = Math.min(
        ...peers.map((p) => get(row, p)?.median ?? Number.POSITIVE_INFINITY),
        Number.POSITIVE_INFINITY,
      );
      const goalText =
        row.goalS === undefined ? 'fastest or tied' : `fastest or tied; worst run ≤ ${row.goalS} s`;
      return [
        row.label,
        goalText,
        ...ravens.map((r) => {
          const mine = get(row, r);
          if (mine === undefined) return 'n/a';
          const fastest = mine.median <= best + TIE_S ? 'fastest or tied' : 'slower';
          if (row.goalS === undefined) return fastest;
          const within = mine.max <= row.goalS ? `worst ≤ ${row.goalS} s` : `worst > ${row.goalS} s`;
          return `${fastest}; ${within}`;
        }),
      ];
    }),
  );

  const failures = rows
    .filter((row, i) => rows.findIndex((r) => r.scenario === row.scenario) === i)
    .flatMap((row) =>
      names.flatMap((name) =>
        (results.get(row.scenario)?.get(name)?.failures ?? []).map(
          (why) => `- ${row.scenario}, \`${name}\`: ${why.replace(/\s+/g, ' ').slice(0, 300)}`,
        ),
      ),
    );

  return [
    '# Recovery after faults',
    '',
    `Measured ${machineLine(ctx.nodeVersion)}; ${loadSummary(ctx.load).replace('each run', 'each round')}. Raven: ${ctx.raven}.`,
    '',
    `Each fault hits every contestant at once, each in its own process and (for the connection`,
    `faults) behind a TCP proxy of its own, on a real local apiserver. Median of ${ctx.runs}`,
    'runs (fresh processes each), with the range in brackets. "Resumed" is the first time the',
    "contestant's handler receives a change (the ticker ConfigMap, written straight to the",
    `apiserver every ${TICK_MS} ms and once at the recovery point) whose write was sent at or after`,
    `the point the row measures from. The stall lasts at most ${ctx.stallCapS} s; other waits for a`,
    `resume stop after ${ctx.resumeCapS} s. Connection attempts: connections the proxy accepted or`,
    'reset; over TLS each attempt carries at least one request, and no connection survives the',
    'outage, so this counts the requests too. How it is measured: docs/benchmarks.md.',
    '',
    main,
    '',
    ...(ctx.contestants.some((c) => c.name === 'client-node-informer')
      ? [
          "`client-node-informer`'s times after a connection fault include a fixed wait of 5 s: its",
          'informer stops on an error and does not reconnect by itself; the library documents starting it',
          'again from the `error` handler, and its example does so after 5 s, which is what runs here. A',
          'program that restarts it sooner resumes sooner; no shorter wait is documented.',
          '',
        ]
      : []),
    'Rows:',
    '',
    ...rows.map((row) => `- ${row.label}: ${row.definition}.`),
    '',
    `Ratios (peer / Raven: above 1 means Raven resumes sooner or sends fewer requests; seconds`,
    `below ${FLOOR_S} count as ${FLOOR_S}, the resolution; "> x": the peer's median is past the cap):`,
    '',
    ratios,
    '',
    `Against issue 9's goal (fastest or tied: median within ${TIE_S} s of the best peer's; the worst`,
    `of ${ctx.runs} runs stands in for the p95):`,
    '',
    goal,
    '',
    'Contestants:',
    '',
    ...ctx.contestants.map((c) => `- \`${c.name}\`: ${c.description}`),
    ...(failures.length === 0 ? [] : ['', 'Failed runs:', '', ...failures]),
    '',
  ].join('\n');
}
