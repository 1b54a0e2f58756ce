/**
 * A {@link DecodeError} that knows where in the stream it happened, so a log line can point at the
 * offending bytes. It is still a DecodeError: classification (`isStreamBroken`) treats it as one.
 */
import { DecodeError } from '../../errors/raven-error.js';

/** Characters of the offending text quoted in messages; enough to recognise a line, never a whole object. */
const EXCERPT_CHARS = 120;

/** Where a decode error happened: the byte offset in the stream and, for line streams, the line number. */
export interface StreamPosition {
  /** Offset, in bytes from the start of the stream, of the line (or list item) that failed. */
  byteOffset: number;
  /** 1-based line number, for newline-delimited streams. */
  line?: number;
}

/** A stream frame that could not be decoded, with its position and a short excerpt. */
export class StreamDecodeError extends DecodeError {
  readonly byteOffset: number;
  readonly line: number | undefined;
  readonly excerpt: string;

  constructor(problem: string, position: StreamPosition, text = '', options: { cause?: unknown } = {}) {
    const excerpt = excerptOf(text);
    const where =
      position.line === undefined
        ? `at byte ${position.byteOffset}`
        : `at line ${position.line} (byte ${position.byteOffset})`;
    super(`${problem} ${where}${excerpt === '' ? '' : `: ${JSON.stringify(excerpt)}`}`, options);
    this.byteOffset = position.byteOffset;
    this.line = position.line;
    this.excerpt = excerpt;
  }
}

/** The start of `text`, shortened with an ellipsis. */
export function excerptOf(text: string): string {
  return text.length <= EXCERPT_CHARS ? text : `${text.slice(0, EXCERPT_CHARS)}…`;
}
