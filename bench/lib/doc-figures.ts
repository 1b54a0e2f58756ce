/**
 * The docs' benchmark tables and headline figures, generated from the committed result files in
 * bench/results/. A doc marks each generated block:
 *
 *   <!-- bench:decode -->
 *   ...generated; edits here are overwritten...
 *   <!-- /bench:decode -->
 *
 * `npm run bench:docs` rewrites every block of every doc under docs/ (and the README);
 * `npm run bench:docs -- --check` and test/unit/bench/doc-figures.test.ts fail when a doc differs
 * from what the results generate, so a figure in the docs cannot drift from its result file. Each
 * block states its source file, the date, Node and load average the file records, and marks a
 * figure measured by a method since corrected (peak RSS from `getrusage`, PostgreSQL without fsync).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './child.js';
import {
  cellOf,
  measuredLine,
  medianOf,
  rangeOf,
  resultSections,
  resultTables,
  tableWith,
  type ResultTable,
} from './results-markdown.js';
import { table } from './report.js';
import { median } from './rounds.js';

/** Reads a file of the repository by its path from the root. */
export type ReadResult = (path: string) => string;

export const readCommitted: ReadResult = (path) => readFileSync(join(repoRoot, path), 'utf8');

const OLD_RSS = 'old method: `getrusage` maxRSS, which can carry the spawning parent’s peak';

/** Whether a result file measured peak RSS as the process's own VmHWM. */
const rssByVmHwm = (text: string): boolean => /VmHWM/.test(text);

const link = (path: string): string => `[${path}](../${path})`;
const code = (name: string): string => `\`${name}\``;

/** How two contestants' medians (ratio to the same baseline) compare, with their ranges. */
function versus(a: string, aCell: string | undefined, b: string, bCell: string | undefined): string {
  const [am, bm] = [medianOf(aCell), medianOf(bCell)];
  if (!Number.isFinite(am) || !Number.isFinite(bm)) return `${a} against ${b}: not both measured in this run`;
  const [alo, ahi] = rangeOf(aCell);
  const [blo, bhi] = rangeOf(bCell);
  const figures = `${a} ${aCell}, ${b} ${bCell}`;
  if (ahi < blo) return `${figures}: **${a} is cheaper** (the ranges do not overlap)`;
  if (bhi < alo) return `${figures}: **${b} is cheaper** (the ranges do not overlap)`;
  const lower = am < bm ? a : b;
  return `${figures}: the ranges overlap, so no difference beyond the run-to-run spread (${lower}'s median is lower)`;
}

/** The newest Node section of a suite's result file that ran under several Node versions. */
function newestNodeSection(text: string, path: string): { heading: string; text: string } {
  const sections = resultSections(text, 2).filter((s) => s.heading.startsWith('Node '));
  const newest = sections.at(-1);
  if (newest === undefined) return { heading: '', text };
  if (newest.text.trim() === '') throw new Error(`${path}: empty section ${newest.heading}`);
  return newest;
}

function decode(read: ReadResult): string {
  const path = 'bench/results/decode.md';
  const section = newestNodeSection(read(path), path);
  const t = tableWith(section.text, 'CPU ÷ raw', path);
  const rss = rssByVmHwm(section.text) ? 'peak RSS ÷ raw' : `peak RSS ÷ raw (${OLD_RSS})`;
  const rows: [string, string, string][] = [
    ['raven-decode', '`decodeWatchEvents`', 'nothing'],
    ['raven-decode-drop-mf', '... with `dropManagedFields`', 'nothing'],
    ['raven-decode-filter', '... with a filter keeping 1 namespace in 10', 'nothing'],
    ['client-node-watch', 'client-node `Watch`', 'nothing'],
    ['raven-watch-nokeep', '`watch()`, `keepObjects: false`', 'name, resourceVersion, uid'],
    ['raven-watch', '`watch()`, its defaults', 'every object'],
    ['raven-watch-drop-mf', '`watch()`, `dropManagedFields`', 'every object, no managedFields'],
    ['client-node-informer', 'client-node informer', 'every object'],
    ['fluent-watch', 'fluent `Watch`', 'every object'],
  ];
  const present = rows.filter(([name]) => Number.isFinite(medianOf(cellOf(t, name, 'CPU ÷ raw'))));
  const missing = rows.filter((r) => !present.includes(r)).map(([name]) => code(name));
  const cpu = (name: string): string | undefined => cellOf(t, name, 'CPU ÷ raw');
  return [
    `From ${link(path)}, ${section.heading || 'its run'}: measured ${measuredLine(section.text)}.`,
    '',
    table(
      ['contestant', 'keeps', 'CPU ÷ raw `JSON.parse`: median (range)', rss, 'runs'],
      present.map(([name, label, keeps]) => [
        label,
        keeps,
        cpu(name) ?? 'n/a',
        cellOf(t, name, 'RSS ÷ raw') ?? 'n/a',
        cellOf(t, name, 'runs') ?? 'n/a',
      ]),
    ),
    '',
    ...(missing.length === 0 ? [] : [`Not measured in this run: ${missing.join(', ')}.`, '']),
    'Like with like, CPU ÷ raw:',
    '',
    `- Neither keeps objects: ${versus('`decodeWatchEvents`', cpu('raven-decode'), "client-node's `Watch`", cpu('client-node-watch'))}.`,
    `- Both keep every object: ${versus('`watch()`', cpu('raven-watch'), "client-node's informer", cpu('client-node-informer'))}; against fluent's \`Watch\`: ${versus('`watch()`', cpu('raven-watch'), "fluent's `Watch`", cpu('fluent-watch'))}.`,
  ].join('\n');
}

const LIST_WATCH_LABELS: [string, string][] = [
  ['raven-default', '**its defaults** (one page on 1.33 and later)'],
  ['raven-watchlist', 'streaming initial list (`watchList: true`)'],
  ['raven-paged', 'paginated list, 500 per page'],
  ['raven-paged-5000', 'paginated list, 5000 per page'],
  ['raven-one-page', 'the list in one page (`pageSize: 1_000_000`)'],
];

/** The server's CPU column of a list+watch result, which runs before 2026-12-06 did not have. */
const SERVER_CPU = 'apiserver + etcd CPU';

/** Each initial list side by side, for docs/watch.md ("Which initial list"). */
function initialList(read: ReadResult): string {
  const path = 'bench/results/list-watch.md';
  const text = read(path);
  const main = tableWith(text, 'time to synced', path);
  const labels: [string, string][] = [
    ...LIST_WATCH_LABELS,
    ['client-node-informer', "for comparison: client-node's informer"],
  ];
  const rows = labels
    .filter(([name]) => cellOf(main, name, 'time to synced') !== undefined)
    .map(([name, label]) => [
      label,
      cellOf(main, name, 'time to synced') ?? 'n/a',
      cellOf(main, name, 'CPU') ?? 'n/a',
      cellOf(main, name, SERVER_CPU) ?? 'not measured',
      cellOf(main, name, 'longest block') ?? 'n/a',
    ]);
  return [
    `From ${link(path)}: measured ${measuredLine(text)}. Medians, with the range of the rounds.`,
    '',
    table(
      [
        'initial list',
        'time to synced, ms',
        'client CPU, ms',
        `${SERVER_CPU}, ms`,
        'longest block, ms (main-thread CPU)',
      ],
      rows,
    ),
  ].join('\n');
}

function listWatch(read: ReadResult): string {
  const path = 'bench/results/list-watch.md';
  const text = read(path);
  const main = tableWith(text, 'time to synced', path);
  const pairs = tableWith(text, 'pair', path);
  const ratio = (raven: string, peer: string, column: string): string =>
    cellOf(pairs, `${raven} vs ${peer}`, column) ?? 'n/a';
  const both = (raven: string, column: string): string =>
    `${ratio(raven, 'client-node-informer', column)} / ${ratio(raven, 'fluent-watch', column)}`;
  const rss = rssByVmHwm(text) ? 'peak RSS' : `peak RSS (${OLD_RSS})`;
  const present = LIST_WATCH_LABELS.filter(([name]) => cellOf(main, name, 'time to synced') !== undefined);
  return [
    `From ${link(path)}: measured ${measuredLine(text)}. Ratios are client-node's informer / fluent's \`Watch\` over Raven (above 1x: Raven is faster, uses less, or blocks less), of the medians.`,
    '',
    table(
      [
        'Raven watcher',
        'time to synced, ms',
        'time to synced vs peers',
        'CPU vs peers',
        `${SERVER_CPU} vs peers`,
        `${rss} vs peers`,
        'longest block vs peers',
      ],
      present.map(([name, label]) => [
        label,
        cellOf(main, name, 'time to synced') ?? 'n/a',
        both(name, 'time to synced'),
        both(name, 'CPU'),
        both(name, SERVER_CPU),
        both(name, 'peak RSS'),
        both(name, 'longest block'),
      ]),
    ),
    '',
    `Time to synced of the peers: client-node's informer ${cellOf(main, 'client-node-informer', 'time to synced') ?? 'n/a'} ms, fluent's \`Watch\` ${cellOf(main, 'fluent-watch', 'time to synced') ?? 'n/a'} ms.`,
  ].join('\n');
}

function cacheHeap(read: ReadResult): string {
  const path = 'bench/results/cache-heap.md';
  const text = read(path);
  const t = tableWith(text, 'cache heap MiB', path);
  const heap = (name: string): number => medianOf(cellOf(t, name, 'cache heap MiB'));
  const peer = heap('client-node-informer');
  const rows: [string, string, string][] = [
    ['client-node-informer', '@kubernetes/client-node informer', 'yes'],
    ['raven-informer', 'Raven `Informer` over a default `watch()`', 'yes'],
    ['raven-informer-frozen', '... frozen (`freeze: always`)', 'yes'],
    ['baseline-parsed-list', 'baseline: the parsed list kept as it is', 'yes'],
    ['raven-shared-informers', 'Raven `SharedInformers`, its defaults', 'no (dropped)'],
    ['raven-informer-drop', '`Informer`, the transform and the watcher drop them', 'no (dropped)'],
    ['raven-informer-transform', '`Informer`, `transform: dropManagedFields` only', 'no (dropped)'],
    ['raven-watcher-keep', 'Raven `watch()` alone, `keepObjects: true`', 'no cache'],
    ['raven-watcher-nokeep', 'Raven `watch()` alone, `keepObjects: false`', 'no cache'],
  ];
  const peakRss = rssByVmHwm(text) ? 'peak RSS MiB' : `peak RSS MiB (${OLD_RSS})`;
  const likeWithLike = peer / heap('raven-informer');
  return [
    `From ${link(path)}: measured ${measuredLine(text)}.`,
    '',
    table(
      [
        'cache of the pods',
        'keeps managedFields',
        'cache heap MiB',
        'client-node informer ÷ this',
        'RSS after sync MiB',
        peakRss,
      ],
      rows
        .filter(([name]) => Number.isFinite(heap(name)))
        .map(([name, label, mf]) => [
          label,
          mf,
          cellOf(t, name, 'cache heap MiB') ?? 'n/a',
          mf === 'no cache' ? '—' : `${(peer / heap(name)).toFixed(2)}x`,
          cellOf(t, name, 'RSS after sync') ?? 'n/a',
          cellOf(t, name, 'peak RSS') ?? 'n/a',
        ]),
    ),
    '',
    `**Like with like** (both keep every pod whole, managedFields included): client-node's informer needs ${likeWithLike.toFixed(2)}x the cache heap of Raven's \`Informer\`. Dropping managedFields is Raven's option, which client-node does not offer; \`SharedInformers\` does it by default: ${(peer / heap('raven-shared-informers')).toFixed(2)}x, not a like-for-like figure.`,
  ].join('\n');
}

/** Rows by sink from the newest file that measured that sink. */
function sinks(read: ReadResult): string {
  const sources = ['bench/results/sinks.md', 'bench/results/sinks-2026-11-24.md'];
  const seen = new Set<string>();
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const path of sources) {
    let text: string;
    try {
      text = read(path);
    } catch {
      continue;
    }
    const t = tableWith(text, 'batched', path);
    const durable = /synchronous_commit/.test(text);
    let used = false;
    for (const row of t.rows) {
      const sink = (row[0] ?? '').replaceAll('`', '');
      if (seen.has(sink)) continue;
      seen.add(sink);
      used = true;
      const postgres = sink === 'postgres' ? (durable ? 'fsync on' : '**fsync off** (old set-up)') : '';
      rows.push([
        `${code(sink)}${postgres === '' ? '' : ` (${postgres})`}`,
        cellOf(t, sink, 'batched') ?? 'n/a',
        cellOf(t, sink, 'one per write') ?? 'n/a',
        cellOf(t, sink, 'batched / one per write') ?? 'n/a',
        cellOf(t, sink, 'runs') ?? 'n/a',
        link(path),
      ]);
    }
    if (used) notes.push(`${link(path)}: measured ${measuredLine(text)}.`);
  }
  return [
    table(
      ['sink', 'batched, changes/s', 'one per write, changes/s', 'batched / one per write', 'runs', 'from'],
      rows,
    ),
    '',
    ...notes.map((n) => `- ${n}`),
  ].join('\n');
}

function clientNode(read: ReadResult): string {
  const path = 'bench/results/client-node.md';
  const section = newestNodeSection(read(path), path);
  const t = tableWith(section.text, 'CPU ms', path);
  const rows: [string, string][] = [
    ['client-node', 'client-node 2.0.1'],
    ['client-node-1.4', 'client-node 1.4'],
    ['kube-raven/client-node', '`kube-raven/client-node`'],
  ];
  const rss = rssByVmHwm(section.text) ? 'peak RSS (VmHWM) MiB' : `peak RSS MiB (${OLD_RSS})`;
  return [
    `From ${link(path)}, ${section.heading}: measured ${measuredLine(section.text)}.`,
    '',
    table(
      ['module', 'CPU ms: median (range)', 'CPU ÷ subpath', rss, 'RSS ÷ subpath', 'runs'],
      rows
        .filter(([name]) => cellOf(t, name, 'CPU ms') !== undefined)
        .map(([name, label]) => [
          label,
          cellOf(t, name, 'CPU ms') ?? 'n/a',
          cellOf(t, name, 'CPU ÷') ?? 'n/a',
          cellOf(t, name, 'peak RSS') ?? 'n/a',
          cellOf(t, name, 'RSS ÷') ?? 'n/a',
          cellOf(t, name, 'runs') ?? 'n/a',
        ]),
    ),
  ].join('\n');
}

/** The runs of bench/image/start.ts in bench/results/image.md, newest first (its `## <date>, commit <hash>` sections). */
function imageRuns(read: ReadResult): { heading: string; text: string; values: ResultTable }[] {
  const path = 'bench/results/image.md';
  return resultSections(read(path), 2)
    .filter((s) => /^\d{4}-\d{2}-\d{2}, commit /.test(s.heading))
    .map((s) => ({ ...s, values: tableWith(s.text, 'what', `${path}, ${s.heading}`) }));
}

function image(read: ReadResult): string {
  const path = 'bench/results/image.md';
  const [newest, previous] = imageRuns(read);
  if (newest === undefined) throw new Error(`${path}: no "## <date>, commit <hash>" section`);
  const value = (run: typeof newest, row: string): string => cellOf(run.values, row, 'value') ?? 'n/a';
  const machine = newest.text.split('\n').find((l) => l.startsWith('`localhost/')) ?? '';
  const rows: [string, string][] = [
    [
      'size, compressed (the gzip layer a registry stores and a node pulls)',
      'size, compressed (gzip layer, OCI)',
    ],
    ["size, uncompressed (podman's figure)", 'size, uncompressed (podman)'],
    ['process start to first `synced`, `podman run` of the image, ms', 'start to first synced, image, ms'],
    [
      "the image's Node running the checkout's `dist/` on the host, interleaved, ms",
      'the same, Node and dist/ on the host, ms',
    ],
    ['runs', 'runs'],
    ['load average (1 min) at each run', 'load average (1 min) at each run'],
  ];
  return [
    `From ${link(path)}, ${newest.heading}: ${machine.replace(/\.$/, '')}.`,
    '',
    table(
      previous === undefined ? ['what', 'value'] : ['what', 'value', `before (${previous.heading})`],
      rows.map(([label, row]) =>
        previous === undefined
          ? [label, value(newest, row)]
          : [label, value(newest, row), value(previous, row)],
      ),
    ),
  ].join('\n');
}

/** Every full run of the sharding suite that is committed, newest first: none is preferred. */
const SHARDING_RUNS = ['bench/results/sharding-2026-11-27.md', 'bench/results/sharding.md'];

function sharding(read: ReadResult): string {
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const path of SHARDING_RUNS) {
    const text = read(path);
    const date = /^Measured (\d{4}-\d{2}-\d{2})/m.exec(text)?.[1] ?? path;
    const durable = /synchronous_commit/.test(text);
    const tables = resultTables(text).filter((t) => t.header.includes('replicas'));
    for (const [filtering, t] of [
      ['server-side', tables.find((x) => x.headings.some((h) => h.startsWith('Server-side')))],
      ['client-side', tables.find((x) => x.headings.some((h) => h.startsWith('Client-side')))],
    ] as const) {
      for (const r of t?.rows ?? []) {
        const n = r[0] ?? '';
        const cell = (column: string): string => (t === undefined ? 'n/a' : (cellOf(t, n, column) ?? 'n/a'));
        rows.push([
          date,
          filtering,
          n,
          cell('CPU s per replica'),
          cell('CPU ÷ single'),
          cell('CPU ÷ unsharded'),
          cell('read ÷ single'),
          cell('peak RSS'),
          cell('runs'),
        ]);
      }
    }
    notes.push(
      `${link(path)}: measured ${measuredLine(text)}; ${
        durable
          ? 'PostgreSQL durable (`fsync` on).'
          : "**PostgreSQL with `fsync=off`** (the old set-up, which flatters the checkpoint's writes)."
      }`,
    );
  }
  return [
    table(
      [
        'run',
        'filtering',
        'N',
        'CPU s per replica (busiest)',
        '÷ 1 sharded replica',
        '÷ unsharded replica',
        'bytes read ÷ 1 replica',
        'peak RSS MiB',
        'rounds',
      ],
      rows,
    ),
    '',
    'Medians over the rounds (range in brackets), every committed full run of the suite:',
    '',
    ...notes.map((n) => `- ${n}`),
  ].join('\n');
}

/** Every committed run of the drift check's pass (resync-pass.ts), the full-size one first. */
const RESYNC_RUNS = [
  'bench/results/translator-resync.md',
  'bench/results/translator-resync-small-2026-11-28.md',
];

/** One row per run: its size, the calls and durations of its passes, the open rule's deletion. */
function translatorResync(read: ReadResult): string {
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const path of RESYNC_RUNS) {
    const text = read(path);
    const size = /^# Drift check: one resync pass at (.*)$/m.exec(text)?.[1] ?? 'n/a';
    const t = tableWith(text, 'calls', path);
    const column = (name: string): number => t.header.findIndex((h) => h.startsWith(name));
    const cells = (name: string): string[] => t.rows.map((r) => r[column(name)] ?? '');
    const seconds = cells('duration').map((c) => medianOf(c));
    const calls = [...new Set(cells('calls'))];
    const loads = column('load') < 0 ? [] : cells('load').map((c) => medianOf(c));
    const repairs = cells('repairs').filter((c) => c !== '{}');
    const open =
      /deleted ([\d.]+) s after the start of the pass that found it.*still there afterwards: (\w+)/.exec(
        text,
      );
    const made = /^State made in (\d+) s/m.exec(text)?.[1];
    rows.push([
      size,
      String(t.rows.length),
      calls.join(', '),
      `${median(seconds).toFixed(2)} s (${Math.min(...seconds).toFixed(2)}–${Math.max(...seconds).toFixed(2)})`,
      loads.length === 0
        ? `${/load average ([\d.]+)/.exec(text)?.[1] ?? 'n/a'} at the start (not recorded per pass)`
        : `${median(loads).toFixed(1)} (${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)})`,
      repairs.length === 0 ? 'none' : repairs.join('; '),
      open === null ? 'n/a' : `${open[1] ?? ''} s${open[2] === 'false' ? '' : ' (**still there**)'}`,
    ]);
    const run = text.split('\n').find((l) => l.startsWith('Run on '));
    notes.push(
      `${link(path)}: ${run === undefined ? 'no date recorded' : run.slice('Run on '.length).replace(/\.$/, '')}${made === undefined ? '' : `; state made in ${made} s`}.`,
    );
  }
  return [
    table(
      [
        'size',
        'passes',
        'OpenStack calls per pass',
        'pass duration: median (range)',
        'load average',
        'repairs (false alarms)',
        'open rule deleted after the pass started',
      ],
      rows,
    ),
    '',
    ...notes.map((n) => `- ${n}`),
  ].join('\n');
}

/** The daemon's goal (issue 31): `raven run` end to end at no more than this many raw parses per change. */
const DAEMON_GOAL = 3.0;

function daemon(read: ReadResult): string {
  const path = 'bench/results/daemon.md';
  const text = read(path);
  const t = tableWith(text, 'CPU µs per change', path);
  const rows = t.rows.map((row) => (row[0] ?? '').replaceAll('`', ''));
  const ratio = cellOf(t, 'raven run', 'CPU ÷ raw JSON.parse');
  const [low, high] = rangeOf(ratio);
  const verdict =
    high <= DAEMON_GOAL
      ? 'met in every round'
      : medianOf(ratio) <= DAEMON_GOAL
        ? `met by the median, not in every round (up to ${high.toFixed(2)}x)`
        : `**not met** (${low.toFixed(2)}x to ${high.toFixed(2)}x)`;
  const setUp = text.split('\n').find((line) => line.startsWith('`raven run` (')) ?? '';
  const objects = /with (\d[\d,]*) realistic pods listed, then (\d[\d,]*) watch events/.exec(setUp);
  return [
    `From ${link(path)}: measured ${measuredLine(text)}.${objects === null ? '' : ` ${objects[1]} pods listed, then ${objects[2]} changes, stdout and file sinks (\`fsync: always\`), SQLite checkpoint.`}`,
    '',
    table(
      [
        'contestant',
        'changes/s',
        'CPU µs per change',
        'CPU ÷ raw `JSON.parse`',
        "CPU ÷ Raven's own watch",
        'runs',
      ],
      rows.map((name) => [
        code(name),
        cellOf(t, name, 'changes/s') ?? 'n/a',
        cellOf(t, name, 'CPU µs per change') ?? 'n/a',
        cellOf(t, name, 'CPU ÷ raw JSON.parse') ?? 'n/a',
        cellOf(t, name, 'CPU ÷ raven watch') ?? 'n/a',
        cellOf(t, name, 'runs') ?? 'n/a',
      ]),
    ),
    '',
    `Goal: \`raven run\` at no more than ${DAEMON_GOAL.toFixed(1)}x the raw parse per change: ${verdict}.`,
  ].join('\n');
}

/** Sharding as capacity (issue 31, section 4): CPU per owned change at saturation, and its goals. */
function saturation(read: ReadResult): string {
  const path = 'bench/results/saturation.md';
  const text = read(path);
  const t = tableWith(text, 'CPU µs per owned change', path);
  const goals = tableWith(text, 'goal', path);
  const columns = [
    'replicas',
    'CPU µs per owned change',
    '÷ unsharded',
    'changes/s per replica',
    'changes/s, all replicas',
    'PostgreSQL commits/s',
    'runs',
  ];
  return [
    `From ${link(path)}: measured ${measuredLine(text)}. Each replica's share streamed back to back from the pre-serialised stand-in apiserver, stdout sink, PostgreSQL checkpoint with fsync on; medians (range) over the rounds of the median replica of each run.`,
    '',
    table(
      ['setup', ...columns],
      t.rows.map((row) => {
        const name = (row[0] ?? '').replaceAll('`', '');
        return [code(name), ...columns.map((c) => cellOf(t, name, c) ?? 'n/a')];
      }),
    ),
    '',
    table(goals.header, goals.rows),
  ].join('\n');
}

/** The generated blocks by name. */
export const docBlocks: Record<string, (read: ReadResult) => string> = {
  decode,
  'list-watch': listWatch,
  'initial-list': initialList,
  'cache-heap': cacheHeap,
  sinks,
  'client-node': clientNode,
  sharding,
  image,
  'translator-resync': translatorResync,
  daemon,
  saturation,
};

const BLOCK = /(<!-- bench:([\w-]+)[^>]*-->\n)([\s\S]*?)(<!-- \/bench:\2 -->)/g;

/** `doc` with every block regenerated from the results, formatted as the repository's prettier does. */
export async function renderDoc(
  doc: string,
  path: string,
  read: ReadResult = readCommitted,
): Promise<string> {
  const replaced = doc.replace(BLOCK, (_all, open: string, name: string, _body: string, close: string) => {
    const generate = docBlocks[name];
    if (generate === undefined)
      throw new Error(`${path}: unknown block "bench:${name}"; known: ${Object.keys(docBlocks).join(', ')}`);
    return `${open}\n${generate(read)}\n\n${close}`;
  });
  const prettier = await import('prettier');
  const options = await prettier.resolveConfig(join(repoRoot, path));
  return prettier.format(replaced, { ...options, filepath: join(repoRoot, path) });
}

/** The docs that may hold generated blocks: README.md and docs/*.md, by path from the root. */
export function docsWithFigures(): string[] {
  const docs = readdirSync(join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs].filter((path) => readCommitted(path).includes('<!-- bench:'));
}
