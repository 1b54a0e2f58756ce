/**
 * The e-mail sink's message: one mail for the changes written together (a digest when there are
 * several), plain text, in the order given. The subject is the subject template rendered on the
 * first change, with `(+N more)` when the mail holds more; the body is each change's headline
 * (time, type, kind, namespace/name), its diff cut to `maxDiffLines`, and its change id, so a
 * reader can tell a repeated mail from a new one.
 *
 * The Message-ID is derived from the change ids: the same changes sent again (a retry after the
 * server's answer was lost) carry the same Message-ID, which mail stores and clients use to show
 * one copy.
 */
import { createHash } from 'node:crypto';
import type { ChangeEvent } from '../model/change-event.js';
import type { SinkRecord } from '../model/gap-notice.js';
import { renderTemplate } from '../model/template.js';
import { eventLines, fitLines, truncateText } from './event-summary.js';
import { formatEventText, formatGapText } from './stdout-sink.js';
import { RavenError } from '../../errors/raven-error.js';

/** The default subject template. */
export const EMAIL_SUBJECT = '[raven] {{type}} {{resource.kind}} {{key}}';

/** RFC 5322 asks for lines under 78 characters; a subject longer than this is cut. */
const SUBJECT_CHARS = 200;

export interface EmailMessageOptions {
  /** Subject template (`{{placeholders}}` of the change event); default {@link EMAIL_SUBJECT}. */
  subject?: string;
  /** Diff lines shown per change before "… and N more"; default 50. */
  maxDiffLines?: number;
  /** The domain of the Message-ID (the sender address's domain). */
  domain: string;
}

export interface EmailMessage {
  subject: string;
  text: string;
  messageId: string;
}

export function emailMessage(records: readonly SinkRecord[], options: EmailMessageOptions): EmailMessage {
  const first = records[0];
  if (first === undefined)
    throw new RavenError('ERR_INVALID_ARGUMENT', 'an e-mail needs at least one change');
  const more = records.length > 1 ? ` (+${records.length - 1} more)` : '';
  const headline =
    first.type === 'gap'
      ? `[raven] gap ${first.resource.kind} watcher ${first.watcher}`
      : renderTemplate(options.subject ?? EMAIL_SUBJECT, first);
  // Header values are one line: template output with newlines (a multi-line diff) is folded into spaces.
  const subject = truncateText(headline.replace(/\s+/g, ' ').trim(), SUBJECT_CHARS - more.length) + more;
  const maxLines = options.maxDiffLines ?? 50;
  const sections = records.map((record) =>
    record.type === 'gap'
      ? `${formatGapText(record, false)}    change id: ${record.id}\n`
      : `${changeText(record, maxLines)}    change id: ${record.id}\n`,
  );
  const intro = records.length > 1 ? `${records.length} changes, oldest first.\n\n` : '';
  const digest = createHash('sha256')
    .update(records.map((r) => r.id).join('\n'))
    .digest('hex')
    .slice(0, 32);
  return { subject, text: intro + sections.join('\n'), messageId: `<raven.${digest}@${options.domain}>` };
}

/** The stdout sink's text form, with the diff cut to `maxLines`. */
function changeText(event: ChangeEvent, maxLines: number): string {
  const lines = eventLines(event);
  if (lines.length <= maxLines) return formatEventText(event, false);
  const kept = fitLines(lines, { maxLines, maxChars: Number.MAX_SAFE_INTEGER });
  const head = formatEventText({ ...event, diff: [] }, false);
  return head + kept.map((line) => `    ${line}\n`).join('');
}
