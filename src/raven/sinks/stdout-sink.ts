/**
 * Writes each change event to a stream (standard output by default): readable, coloured lines on
 * a terminal, JSON lines otherwise, so `raven | jq` works and a person at a terminal can read it.
 *
 * Text: `2024-05-01T12:00:00.000Z modified Deployment default/web` then the diff lines indented
 * by four spaces; a gap notice is `<time> gap <Kind> watcher <name> (<reason>)` then its message.
 * Colour only on a TTY and never when `NO_COLOR` is set to a non-empty value.
 *
 * Backpressure: `deliver` resolves once the stream has taken the line, and waits for `drain`
 * when the stream's buffer is full, so a slow reader slows delivery down instead of growing
 * memory. A stream that has been closed fails with a non-retryable error; a write error is
 * retryable.
 */
import type { Writable } from 'node:stream';
import { abortReason } from '../../util/signals.js';
import { SinkError } from '../../errors/raven-error.js';
import { eventObjectKey, type ChangeEvent, type ChangeType } from '../model/change-event.js';
import type { GapNotice, SinkRecord } from '../model/gap-notice.js';
import { eventLines, eventNote } from './event-summary.js';
import type { Sink } from './sink.js';
import { recordJson, recordLine } from '../model/record-json.js';

export interface StdoutSinkOptions {
  name: string;
  /** `auto` (default): text on a TTY, JSON lines otherwise. */
  format?: 'auto' | 'text' | 'json';
  /** Default `process.stdout`. */
  stream?: Writable & { isTTY?: boolean };
  /** Force colour on or off; default: on a TTY unless `NO_COLOR` is set. */
  color?: boolean;
  /** Environment consulted for `NO_COLOR`; default `process.env`. */
  env?: Record<string, string | undefined>;
}

const ANSI = {
  reset: '\x1b[0m',
  bold: '\x1b[1m',
  dim: '\x1b[2m',
  red: '\x1b[31m',
  green: '\x1b[32m',
  yellow: '\x1b[33m',
};

const TYPE_COLOR: Record<ChangeType, string> = {
  added: ANSI.green,
  modified: ANSI.yellow,
  deleted: ANSI.red,
};

/** One event as text lines, with ANSI colour when `color`. */
export function formatEventText(event: ChangeEvent, color: boolean): string {
  const paint = (code: string, text: string): string => (color ? `${code}${text}${ANSI.reset}` : text);
  const first = [
    paint(ANSI.dim, event.time),
    paint(TYPE_COLOR[event.type], event.type),
    paint(ANSI.bold, event.resource.kind),
    `${eventObjectKey(event)}${eventNote(event)}`,
  ].join(' ');
  const lines = eventLines(event).map((line) => `    ${paint(ANSI.dim, line)}`);
  return [first, ...lines].join('\n') + '\n';
}

/** A gap notice as text lines, with ANSI colour when `color`. */
export function formatGapText(notice: GapNotice, color: boolean): string {
  const paint = (code: string, text: string): string => (color ? `${code}${text}${ANSI.reset}` : text);
  const where = notice.namespace === undefined ? '' : ` namespace ${notice.namespace}`;
  const first = [
    paint(ANSI.dim, notice.time),
    paint(`${ANSI.bold}${ANSI.red}`, 'gap'),
    paint(ANSI.bold, notice.resource.kind),
    `watcher ${notice.watcher}${where} (${notice.reason})`,
  ].join(' ');
  return `${first}\n    ${notice.message}\n`;
}

/**
 * @example
 * const sink = new StdoutSink({ name: 'console' }); // text on a terminal, JSON lines in a pipe
 */
export class StdoutSink implements Sink {
  readonly name: string;
  readonly #stream: Writable & { isTTY?: boolean };
  readonly #json: boolean;
  /** Standard output itself: JSON lines are written as the record's bytes (see `deliver`). */
  readonly #ownStream: boolean;
  readonly #color: boolean;

  constructor(options: StdoutSinkOptions) {
    this.name = options.name;
    this.#stream = options.stream ?? process.stdout;
    this.#ownStream = options.stream === undefined;
    const tty = this.#stream.isTTY === true;
    const format = options.format ?? 'auto';
    this.#json = format === 'json' || (format === 'auto' && !tty);
    const noColor = (options.env ?? process.env).NO_COLOR;
    this.#color = options.color ?? (tty && (noColor === undefined || noColor === ''));
    // A write error is also emitted as 'error'; without a listener it would end the process.
    // The write callback reports it to the delivery, so here it only needs catching.
    this.#stream.on('error', () => undefined);
  }

  async deliver(record: SinkRecord, signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw abortReason(signal);
    const stream = this.#stream;
    if (stream.destroyed || stream.writableEnded)
      throw new SinkError(`stdout sink "${this.name}": the stream is closed`, { retryable: false });
    // JSON lines: to standard output, the record's UTF-8 line, encoded once for every sink that
    // writes it; a stream the caller gave receives text, as it always has.
    const text = this.#json
      ? this.#ownStream
        ? recordLine(record)
        : `${recordJson(record)}\n`
      : record.type === 'gap'
        ? formatGapText(record, this.#color)
        : formatEventText(record, this.#color);
    await new Promise<void>((resolve, reject) => {
      let written = false;
      let drained = true;
      const settle = (): void => {
        if (written && drained) finish(undefined);
      };
      const onDrain = (): void => {
        drained = true;
        settle();
      };
      const onAbort = (): void => {
        finish(abortReason(signal));
      };
      const onClose = (): void => {
        finish(new SinkError(`stdout sink "${this.name}": the stream closed`, { retryable: false }));
      };
      const finish = (err: Error | undefined): void => {
        stream.off('drain', onDrain);
        stream.off('close', onClose);
        signal.removeEventListener('abort', onAbort);
        if (err === undefined) resolve();
        else reject(err);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const ok = stream.write(text, (err) => {
        if (err !== undefined && err !== null)
          finish(
            new SinkError(`stdout sink "${this.name}": write failed: ${err.message}`, {
              retryable: true,
              cause: err,
            }),
          );
        written = true;
        settle();
      });
      if (!ok) {
        drained = false;
        stream.on('drain', onDrain);
        stream.once('close', onClose);
      }
    });
  }
}
