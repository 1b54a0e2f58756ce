/**
 * How `raven watch` prints events: a table that grows as changes arrive (default and `wide`),
 * diffs under each modification (`diff`), JSON lines (`json`) or YAML documents (`yaml`).
 */
import { stringify } from 'yaml';
import type { KubeObject } from '../client/kube-object.js';
import type { WatcherEvent } from '../watch/watcher-events.js';
import { diffObjects, formatDiff } from '../raven/diff.js';
import { redact } from '../raven/redact.js';
import { paint, type Output } from './output.js';

export type WatchFormat = 'table' | 'wide' | 'json' | 'yaml' | 'diff';

export const WATCH_FORMATS: readonly WatchFormat[] = ['table', 'wide', 'json', 'yaml', 'diff'];

export interface FormatContext {
  output: Output;
  format: WatchFormat;
  /** Show the NAMESPACE column. */
  namespaced: boolean;
  resource: string;
  now: () => number;
}

type Shown = Extract<WatcherEvent, { type: 'initial' | 'added' | 'modified' | 'deleted' }>;

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

function pad(text: string, width: number): string {
  return text.length >= width ? `${text} ` : text.padEnd(width + 1);
}

export class WatchPrinter {
  readonly #c: FormatContext;
  #headerDone = false;
  #nameWidth = 30;
  #nsWidth = 16;

  constructor(context: FormatContext) {
    this.#c = context;
  }

  /** Size the columns from the first objects (the table does not re-align later, as a stream cannot). */
  sizeColumns(objects: readonly KubeObject[]): void {
    for (const o of objects) {
      this.#nameWidth = Math.min(63, Math.max(this.#nameWidth, (o.metadata?.name ?? '').length));
      this.#nsWidth = Math.min(63, Math.max(this.#nsWidth, (o.metadata?.namespace ?? '').length));
    }
  }

  /** The text for one event ('' for nothing to print). */
  render(event: Shown): string {
    const object = redact(event.object, this.#c.resource);
    const previous =
      event.type === 'modified' && event.previous !== undefined
        ? redact(event.previous, this.#c.resource)
        : undefined;
    const diff = previous === undefined ? [] : diffObjects(previous, object);
    switch (this.#c.format) {
      case 'json':
        return `${JSON.stringify({ type: this.#label(event), object, ...(previous === undefined ? {} : { diff }) })}\n`;
      case 'yaml':
        return `---\n${stringify({ type: this.#label(event), ...(previous === undefined ? {} : { diff }), object })}`;
      default:
        return this.#row(event, object, formatDiff(diff));
    }
  }

  #label(event: Shown): string {
    if (event.type === 'initial') return 'EXISTING';
    if (event.type === 'deleted' && event.tombstone) return 'GONE';
    return event.type.toUpperCase();
  }

  #row(event: Shown, object: KubeObject, diffLines: string[]): string {
    const c = this.#c;
    let text = '';
    if (!this.#headerDone) {
      this.#headerDone = true;
      const header = [
        pad('EVENT', EVENT_WIDTH),
        c.namespaced ? pad('NAMESPACE', this.#nsWidth) : '',
        pad('NAME', this.#nameWidth),
        pad('AGE', 6),
        'STATUS',
        c.format === 'wide' ? '  CHANGES' : '',
      ];
      text += `${paint(c.output, 'bold', header.join('').trimEnd())}\n`;
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
    const cells = [
      paint(c.output, style, pad(label, EVENT_WIDTH)),
      c.namespaced ? pad(object.metadata?.namespace ?? '', this.#nsWidth) : '',
      pad(object.metadata?.name ?? '', this.#nameWidth),
      pad(age(object.metadata?.creationTimestamp, c.now()), 6),
      summary(object),
    ];
    if (c.format === 'wide' && diffLines.length > 0) {
      cells.push(
        `  ${diffLines.length === 1 ? (diffLines[0] ?? '') : `${diffLines[0] ?? ''} (+${diffLines.length - 1} more)`}`,
      );
    }
    text += `${cells.join('').trimEnd()}\n`;
    if (c.format === 'diff' || (c.format === 'table' && event.type === 'modified')) {
      const shown = c.format === 'diff' ? diffLines : diffLines.slice(0, 3);
      for (const line of shown) text += `${' '.repeat(EVENT_WIDTH + 1)}${paint(c.output, 'dim', line)}\n`;
      if (shown.length < diffLines.length)
        text += `${' '.repeat(EVENT_WIDTH + 1)}${paint(c.output, 'dim', `… ${diffLines.length - shown.length} more (-o diff shows all)`)}\n`;
    }
    return text;
  }
}
