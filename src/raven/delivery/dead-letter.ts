/**
 * Where events go when a sink gives up on them: one JSON line per event, appended to a file, with
 * the sink, the number of attempts and the last error (its message is already free of URLs'
 * tokens and secrets: sinks scrub them). Replaying is left to the operator: each line's `event`
 * is the change event exactly as the sink would have received it.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errorKind, isRetryable } from '../../errors/classify.js';
import type { SinkRecord } from '../model/gap-notice.js';

export interface DeadLetterRecord {
  /** When the event was given up on (ISO 8601). */
  time: string;
  sink: string;
  attempts: number;
  error: { kind: string; message: string; retryable: boolean };
  event: SinkRecord;
}

/** The small interface the delivery writes to; {@link DeadLetterFile} is the usual one. */
export interface DeadLetterWriter {
  write(record: DeadLetterRecord): Promise<void>;
}

/** The `error` part of a record. */
export function deadLetterError(err: unknown): DeadLetterRecord['error'] {
  return {
    kind: errorKind(err),
    message: err instanceof Error ? err.message : String(err),
    retryable: isRetryable(err),
  };
}

/**
 * Appends records to a JSONL file (the directory is created if needed). Several deliveries may
 * share one file: each record is a single append.
 *
 * @example
 * const deadLetter = new DeadLetterFile('/var/lib/raven/dead-letter.jsonl');
 */
export class DeadLetterFile implements DeadLetterWriter {
  readonly path: string;
  #dirReady: Promise<unknown> | undefined;

  constructor(path: string) {
    this.path = path;
  }

  async write(record: DeadLetterRecord): Promise<void> {
    this.#dirReady ??= mkdir(dirname(this.path), { recursive: true });
    try {
      await this.#dirReady;
    } catch (err) {
      this.#dirReady = undefined;
      throw err;
    }
    await appendFile(this.path, `${JSON.stringify(record)}\n`);
  }
}
