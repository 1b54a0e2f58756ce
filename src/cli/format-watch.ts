/**
 * How `raven watch` prints events: a table that grows as changes arrive (default and `wide`),
 * diffs under each modification (`diff`), JSON lines (`json`) or YAML documents (`yaml`).
 *
 * The table's columns are the apiserver's own when it printed the objects (see
 * `server-table.ts`): the priority-0 columns by default, all of them with `wide`. Without them
 * (a server that answered in the plain form) it falls back to NAME, AGE and a one-word STATUS.
 */
import { stringify } from 'yaml';
import type { KubeObject } from '../client/kube-object.js';
import type { WatcherEvent } from '../watch/watcher-events.js';
import { changedBy } from '../watch/changed-by.js';
import { attributedDiffEntries } from '../raven/model/changed-by-text.js';
import { diffObjects } from '../raven/model/diff.js';
import { redact } from '../raven/model/redact.js';
import { paint, type Output } from './output.js';
import type { ColumnDefinition } from './server-table.js';
import { UsageError } from './usage-error.js';
import {
  columnText,
  compileTemplate,
  parseCustomColumns,
  TemplateError,
  valueText,
  type CustomColumn,
} from './jsonpath-template.js';

export type WatchFormat =
  | { kind: 'table' | 'wide' | 'json' | 'yaml' | 'diff' | 'name' }
  | { kind: 'jsonpath'; template: (object: unknown) => string }
  | { kind: 'custom-columns'; columns: CustomColumn[] };

/** What `--output` takes, as the usage text and errors name it. */
export const WATCH_FORMATS: readonly string[] = [
  'table',
  'wide',
  'diff',
  'json',
  'yaml',
  'name',
  'jsonpath=TEMPLATE',
  'custom-columns=SPEC',
];

/** Parse `--output`; throws a UsageError naming the option and what is valid. */
export function parseWatchFormat(text: string): WatchFormat {
  const eq = text.indexOf('=');
  const name = eq < 0 ? text : text.slice(0, eq);
  const arg = eq < 0 ? undefined : text.slice(eq + 1);
  try {
    switch (name) {
      case 'table':
      case 'wide':
      case 'json':
      case 'yaml':
      case 'diff':
      case 'name':
        if (arg === undefined) return { kind: name };
        break;
      case 'jsonpath':
        if (arg !== undefined && arg !== '') return { kind: 'jsonpath', template: compileTemplate(arg) };
        throw new UsageError(
          `--output jsonpath needs a template, e.g. -o jsonpath='{.metadata.name}{"\\n"}'`,
        );
      case 'custom-columns':
        if (arg !== undefined && arg !== '')
          return { kind: 'custom-columns', columns: parseCustomColumns(arg) };
        throw new UsageError(
          '--output custom-columns needs columns, e.g. -o custom-columns=NAME:.metadata.name',
        );
    }
  } catch (err) {
    if (err instanceof TemplateError) throw new UsageError(`--output ${name}: ${err.message}`);
    throw err;
  }
  throw new UsageError(`--output must be one of ${WATCH_FORMATS.join(', ')}; got "${text}"`);
}

/** `configmap/web`, `deployment.apps/web`: the resource-qualified name kubectl's -o name prints. */
export function qualifiedObjectName(object: KubeObject): string {
  const apiVersion = object.apiVersion ?? '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const kind = (object.kind ?? '').toLowerCase();
  return `${group === '' ? kind : `${kind}.${group}`}/${object.metadata?.name ?? ''}`;
}

export interface FormatContext {
  output: Output;
  format: WatchFormat;
  /** Show the NAMESPACE column. */
  namespaced: boolean;
  resource: string;
  now: () => number;
  /** The server's column definitions, once known (undefined: the fallback columns). */
  columns?: () => readonly ColumnDefinition[] | undefined;
  /** Lead each row with the EVENT and TIME columns (default true; `raven get` prints objects, not events). */
  eventColumn?: boolean;
  /** `--no-headers`: rows only (table, wide, diff, custom-columns). */
  noHeaders?: boolean;
  /** `-L key`: a column per label key, after the server's columns. */
  labelColumns?: readonly string[];
  /** `--show-labels`: a LABELS column last. */
  showLabels?: boolean;
  /** Names as `kind/name` (several kinds in one output, as kubectl prints them). */
  withKind?: boolean;
  /**
   * `--output-watch-events`: json and yaml print kubectl's `{type, object}`, and jsonpath and
   * custom-columns paths read that envelope (`{.type}`, `{.object.metadata.name}`), as kubectl does.
   */
  watchEvents?: boolean;
}

/** kubectl's event types, for `--output-watch-events`: the objects that exist are ADDED, as kubectl lists them. */
export function watchEventType(event: Shown): 'ADDED' | 'MODIFIED' | 'DELETED' {
  return event.type === 'initial' || event.type === 'added'
    ? 'ADDED'
    : event.type === 'modified'
      ? 'MODIFIED'
      : 'DELETED';
}

/** `app.kubernetes.io/name` -> `NAME`: kubectl's header for a `-L` column. */
export function labelHeader(key: string): string {
  return (key.split('/').pop() ?? key).toUpperCase();
}

/** `a=1,b=2`, or `<none>`: the LABELS cell as kubectl prints it. */
export function labelsText(object: KubeObject): string {
  const labels = Object.entries(object.metadata?.labels ?? {});
  return labels.length === 0 ? '<none>' : labels.map(([k, v]) => `${k}=${v}`).join(',');
}

/** `10:42:07`: when a change arrived, in UTC, as the diff lines' `at` times are written. */
export function receivedAt(now: number): string {
  return new Date(now).toISOString().slice(11, 19);
}

/** An object with the cells the server printed for it, when it did. */
export interface PrintedObject {
  object: KubeObject;
  cells?: readonly unknown[] | undefined;
}

export type Shown = Extract<WatcherEvent, { type: 'initial' | 'added' | 'modified' | 'deleted' }>;

/** `3s`, `5m`, `2h`, `4d`, as kubectl shows ages. */
export function age(created: string | undefined, now: number): string {
  if (created === undefined) return '<unknown>';
  const seconds = Math.max(0, Math.floor((now - Date.parse(created)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/** A one-word state for common kinds (pod phase, ready replicas), empty when unknown. */
export function summary(object: KubeObject): string {
  const o = object as KubeObject & {
    status?: {
      phase?: string;
      readyReplicas?: number;
      replicas?: number;
      succeeded?: number;
      conditions?: { type?: string; status?: string }[];
    };
    spec?: { replicas?: number; type?: string; clusterIP?: string };
  };
  if (o.kind === 'Pod') return o.status?.phase ?? '';
  if (o.spec?.replicas !== undefined) return `${o.status?.readyReplicas ?? 0}/${o.spec.replicas} ready`;
  if (o.kind === 'Service') return [o.spec?.type, o.spec?.clusterIP].filter(Boolean).join(' ');
  if (o.kind === 'Namespace') return o.status?.phase ?? '';
  if (o.kind === 'Job') return `${o.status?.succeeded ?? 0} succeeded`;
  return '';
}

const EVENT_WIDTH = 9;
const TIME_WIDTH = 8;
/** Under a table row: this many changed fields, and this many lines of one field's text diff. */
const BRIEF_ENTRIES = 3;
const BRIEF_LINES_PER_ENTRY = 12;

/** The first changed fields in full enough to see the change (a text diff's first hunk fits); how many lines were left out. */
function brief(entries: readonly string[][]): { shown: string[]; left: number } {
  const shown: string[] = [];
  let left = 0;
  entries.forEach((lines, i) => {
    const keep = i < BRIEF_ENTRIES ? lines.slice(0, BRIEF_LINES_PER_ENTRY) : [];
    shown.push(...keep);
    left += lines.length - keep.length;
  });
  return { shown, left };
}
/** Widest a server column is padded to; longer cells push the rest of their row right. */
const MAX_COLUMN_WIDTH = 40;

/** A cell as kubectl shows it: `<none>` for null, one line. */
export function cellText(cell: unknown): string {
  if (cell === null || cell === undefined) return '<none>';
  return valueText(cell).replace(/\s*\n\s*/g, ' ');
}

function pad(text: string, width: number): string {
  return text.length >= width ? `${text} ` : text.padEnd(width + 1);
}

export class WatchPrinter {
  readonly #c: FormatContext;
  #headerDone = false;
  #nameWidth = 30;
  #nsWidth = 16;
  readonly #cellWidths: number[] = [];
  readonly #labelWidths: number[] = [];

  constructor(context: FormatContext) {
    this.#c = context;
  }

  /** Size the columns from the first objects (the table does not re-align later, as a stream cannot). */
  sizeColumns(rows: readonly PrintedObject[]): void {
    for (const row of rows) {
      const o = row.object;
      let cells = row.cells;
      this.#nameWidth = Math.min(63, Math.max(this.#nameWidth, this.#name(o).length));
      this.#nsWidth = Math.min(63, Math.max(this.#nsWidth, (o.metadata?.namespace ?? '').length));
      const format = this.#c.format;
      if (format.kind === 'custom-columns') {
        const doc = this.#c.watchEvents === true ? { type: 'ADDED', object: o } : o;
        cells = format.columns.map((column) => columnText(column, doc));
      }
      cells?.forEach((cell, i) => {
        const width = Math.min(MAX_COLUMN_WIDTH, cellText(cell).length);
        this.#cellWidths[i] = Math.max(this.#cellWidths[i] ?? 0, width);
      });
      this.#labelKeys().forEach((key, i) => {
        const width = Math.min(MAX_COLUMN_WIDTH, (o.metadata?.labels?.[key] ?? '').length);
        this.#labelWidths[i] = Math.max(this.#labelWidths[i] ?? labelHeader(key).length, width);
      });
    }
  }

  /** Print the header again before the next row (another kind's rows follow in a stream of several kinds). */
  headerAgain(): void {
    this.#headerDone = false;
  }

  #labelKeys(): readonly string[] {
    return this.#c.labelColumns ?? [];
  }

  /** The NAME cell: `name`, or `kind/name` when several kinds print together. */
  #name(object: KubeObject): string {
    return this.#c.withKind === true ? qualifiedObjectName(object) : (object.metadata?.name ?? '');
  }

  /** The text for one event ('' for nothing to print). */
  render(event: Shown, cells?: readonly unknown[]): string {
    const object = redact(event.object, this.#c.resource);
    const previous =
      event.type === 'modified' && event.previous !== undefined
        ? redact(event.previous, this.#c.resource)
        : undefined;
    const diff = previous === undefined ? [] : diffObjects(previous, object);
    const who =
      event.type === 'modified' && event.managers !== undefined && previous !== undefined
        ? changedBy(
            event.managers,
            diff.map((d) => d.path),
            object,
          )
        : undefined;
    const extra = who === undefined ? {} : { changedBy: who };
    const format = this.#c.format;
    switch (format.kind) {
      case 'name':
        return `${qualifiedObjectName(object)}\n`;
      case 'jsonpath': {
        const text = format.template(
          this.#c.watchEvents === true ? { type: watchEventType(event), object } : object,
        );
        return text === '' || text.endsWith('\n') ? text : `${text}\n`;
      }
      case 'custom-columns':
        return this.#customRow(
          format.columns,
          this.#c.watchEvents === true ? { type: watchEventType(event), object } : object,
        );
      case 'json':
        // kubectl's shape with --output-watch-events; Raven's own (EXISTING, GONE, the diff) without.
        if (this.#c.watchEvents === true)
          return `${JSON.stringify({ type: watchEventType(event), object })}\n`;
        return `${JSON.stringify({ type: this.#label(event), object, ...(previous === undefined ? {} : { diff, ...extra }) })}\n`;
      case 'yaml':
        if (this.#c.watchEvents === true) return `---\n${stringify({ object, type: watchEventType(event) })}`;
        return `---\n${stringify({ type: this.#label(event), ...(previous === undefined ? {} : { diff, ...extra }), object })}`;
      default:
        return this.#row(event, object, cells, attributedDiffEntries(diff, who));
    }
  }

  #label(event: Shown): string {
    if (event.type === 'initial') return 'EXISTING';
    if (event.type === 'deleted' && event.tombstone) return 'GONE';
    return event.type.toUpperCase();
  }

  /** A row of the user's columns (a header first): the values only, no event label, as kubectl prints them. */
  #customRow(columns: readonly CustomColumn[], object: unknown): string {
    const widths = columns.map((column, i) => Math.max(column.header.length, this.#cellWidths[i] ?? 0));
    const line = (texts: string[]): string =>
      `${texts.map((t, i) => (i === texts.length - 1 ? t : pad(t, widths[i] ?? 0))).join('')}\n`;
    let text = '';
    if (!this.#headerDone) {
      this.#headerDone = true;
      if (this.#c.noHeaders !== true) text += line(columns.map((c) => c.header));
    }
    return text + line(columns.map((column) => columnText(column, object)));
  }

  /** The server's columns this format shows, with their positions in a row's cells. */
  #serverColumns(): { def: ColumnDefinition; index: number }[] | undefined {
    const defs = this.#c.columns?.();
    if (defs === undefined || defs.length === 0) return undefined;
    const wide = this.#c.format.kind === 'wide';
    return defs.map((def, index) => ({ def, index })).filter(({ def }) => wide || def.priority === 0);
  }

  #header(columns: { def: ColumnDefinition; index: number }[] | undefined): string[] {
    const c = this.#c;
    const lead = [
      c.eventColumn === false ? '' : pad('EVENT', EVENT_WIDTH) + pad('TIME', TIME_WIDTH),
      c.namespaced ? pad('NAMESPACE', this.#nsWidth) : '',
    ];
    const own =
      columns === undefined
        ? [pad('NAME', this.#nameWidth), pad('AGE', 6), pad('STATUS', 0)]
        : columns.map(({ def, index }) => pad(def.name.toUpperCase(), this.#width(def, index)));
    return [...lead, ...own, ...this.#labelCells(undefined)];
  }

  /** The `-L` and `--show-labels` cells of a row (their headers for no object). */
  #labelCells(object: KubeObject | undefined): string[] {
    const cells = this.#labelKeys().map((key, i) => {
      const text = object === undefined ? labelHeader(key) : (object.metadata?.labels?.[key] ?? '');
      return pad(text, this.#labelWidths[i] ?? labelHeader(key).length);
    });
    if (this.#c.showLabels === true) cells.push(object === undefined ? 'LABELS' : labelsText(object));
    return cells;
  }

  #width(def: ColumnDefinition, index: number): number {
    if (def.format === 'name') return this.#nameWidth;
    return Math.max(def.name.length, this.#cellWidths[index] ?? 0);
  }

  #cells(
    object: KubeObject,
    cells: readonly unknown[] | undefined,
    columns: { def: ColumnDefinition; index: number }[] | undefined,
  ): string[] {
    const c = this.#c;
    if (columns === undefined)
      return [
        pad(this.#name(object), this.#nameWidth),
        pad(age(object.metadata?.creationTimestamp, c.now()), 6),
        pad(summary(object), 0),
      ];
    // No cells: a state the server did not print (a tombstone after a relist); the name still shows.
    return columns.map(({ def, index }) => {
      const text =
        def.format === 'name' && (cells === undefined || c.withKind === true)
          ? this.#name(object)
          : cells === undefined
            ? ''
            : cellText(cells[index]);
      return pad(text, this.#width(def, index));
    });
  }

  #row(event: Shown, object: KubeObject, cells: readonly unknown[] | undefined, entries: string[][]): string {
    const c = this.#c;
    const columns = this.#serverColumns();
    let text = '';
    if (!this.#headerDone) {
      this.#headerDone = true;
      if (c.noHeaders !== true)
        text += `${paint(c.output, 'bold', this.#header(columns).join('').trimEnd())}\n`;
    }
    const label = this.#label(event);
    const style =
      event.type === 'added'
        ? 'green'
        : event.type === 'deleted'
          ? 'red'
          : event.type === 'modified'
            ? 'yellow'
            : 'dim';
    // When the change arrived: existing objects did not change now, so theirs is blank.
    const time = event.type === 'initial' ? '' : receivedAt(c.now());
    const row = [
      c.eventColumn === false ? '' : paint(c.output, style, pad(label, EVENT_WIDTH)) + pad(time, TIME_WIDTH),
      c.namespaced ? pad(object.metadata?.namespace ?? '', this.#nsWidth) : '',
      ...this.#cells(object, cells, columns),
      ...this.#labelCells(object),
    ];
    text += `${row.join('').trimEnd()}\n`;
    if (c.format.kind === 'diff' || event.type === 'modified') {
      const { shown, left } = c.format.kind === 'diff' ? { shown: entries.flat(), left: 0 } : brief(entries);
      for (const line of shown) text += `${' '.repeat(EVENT_WIDTH + 1)}${paint(c.output, 'dim', line)}\n`;
      if (left > 0)
        text += `${' '.repeat(EVENT_WIDTH + 1)}${paint(c.output, 'dim', `… ${left} more (-o diff shows all)`)}\n`;
    }
    return text;
  }
}
