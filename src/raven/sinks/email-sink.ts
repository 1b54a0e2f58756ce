/**
 * Sends change events (and, when asked, gap notices) by e-mail through an SMTP server: the changes
 * delivered together go in one mail (up to `maxBatch`, a digest; `email-message.ts` writes it),
 * so a burst of changes is a few mails, not hundreds, without a timer holding any change back.
 *
 * Accepted means the server answered 250 to the message: it took responsibility for delivering
 * it. SMTP has no idempotency, so a mail whose answer was lost (the connection dropped after the
 * server accepted it) is sent again with the same Message-ID; mail stores and clients show one
 * copy. Security: `starttls` (default) upgrades the connection before anything else is sent and
 * refuses a server that does not offer STARTTLS; `tls` is TLS from the first byte (port 465);
 * `none` sends in clear text (a relay on loopback). With `username`, Raven authenticates (PLAIN or
 * LOGIN, as the server offers) after TLS is up.
 *
 * Failures are classified by `isRetryableSmtpError`: a connection refused or dropped, a timeout
 * and 4xx answers are retried; 5xx answers, refused credentials and certificate problems are not.
 * Connections are pooled (nodemailer's pool) and reopened after any error.
 */
import { createTransport } from 'nodemailer';
import { isRetryableSmtpError } from '../../errors/classify.js';
import { SinkError } from '../../errors/raven-error.js';
import type { SinkRecord } from '../model/gap-notice.js';
import { BatchWriter } from './batch-writer.js';
import { emailMessage, type EmailMessageOptions } from './email-message.js';
import type { Sink } from './sink.js';

export type EmailSecurity = 'starttls' | 'tls' | 'none';

export interface EmailSinkOptions {
  name: string;
  host: string;
  /** Default 587 for `starttls`, 465 for `tls`, 25 for `none`. */
  port?: number;
  /** Default `starttls`. */
  security?: EmailSecurity;
  /** For `starttls` and `tls`: CA certificates (PEM) to trust instead of the system's, and the name to verify. */
  ca?: string | undefined;
  serverName?: string | undefined;
  /** SMTP AUTH credentials; none by default. */
  username?: string | undefined;
  password?: string | undefined;
  /** The sender, `raven@example.com` or `Raven <raven@example.com>`. */
  from: string;
  /** The recipients. */
  to: readonly string[];
  /** Subject template; see `email-message.ts`. */
  subject?: string | undefined;
  /** Diff lines per change in the body; default 50. */
  maxDiffLines?: number;
  /** Most changes per mail; default 50. */
  maxBatch?: number;
  /** For connecting, the greeting and each command; default 10 000 ms. */
  timeoutMs?: number;
}

export const EMAIL_PORTS: Readonly<Record<EmailSecurity, number>> = { starttls: 587, tls: 465, none: 25 };

/**
 * @example
 * const sink = new EmailSink({
 *   name: 'oncall',
 *   host: 'smtp.example.com',
 *   username: 'raven',
 *   password: process.env.SMTP_PASSWORD,
 *   from: 'Raven <raven@example.com>',
 *   to: ['oncall@example.com'],
 * });
 */
export class EmailSink implements Sink {
  readonly name: string;
  readonly #transport: ReturnType<typeof createTransport>;
  readonly #where: string;
  readonly #envelope: { from: string; to: string[] };
  readonly #message: EmailMessageOptions;
  readonly #writer: BatchWriter<SinkRecord>;

  constructor(options: EmailSinkOptions) {
    this.name = options.name;
    const security = options.security ?? 'starttls';
    const port = options.port ?? EMAIL_PORTS[security];
    const timeoutMs = options.timeoutMs ?? 10_000;
    this.#where = `smtp ${options.host}:${port}`;
    this.#transport = createTransport({
      pool: true,
      maxConnections: 2,
      host: options.host,
      port,
      secure: security === 'tls',
      requireTLS: security === 'starttls',
      ignoreTLS: security === 'none',
      ...(security === 'none'
        ? {}
        : {
            tls: {
              ...(options.ca === undefined ? {} : { ca: options.ca }),
              ...(options.serverName === undefined ? {} : { servername: options.serverName }),
            },
          }),
      ...(options.username === undefined
        ? {}
        : { auth: { user: options.username, pass: options.password ?? '' } }),
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    });
    this.#envelope = { from: options.from, to: [...options.to] };
    this.#message = {
      ...(options.subject === undefined ? {} : { subject: options.subject }),
      ...(options.maxDiffLines === undefined ? {} : { maxDiffLines: options.maxDiffLines }),
      domain: /@([^@\s>]+)>?\s*$/.exec(options.from)?.[1] ?? 'raven.invalid',
    };
    this.#writer = new BatchWriter((records) => this.#send(records), {
      maxBatch: options.maxBatch ?? 50,
      maxInFlight: 2,
    });
  }

  deliver(record: SinkRecord, signal: AbortSignal): Promise<void> {
    return this.#writer.submit(record, signal);
  }

  close(): Promise<void> {
    this.#transport.close();
    return Promise.resolve();
  }

  async #send(records: SinkRecord[]): Promise<void> {
    const message = emailMessage(records, this.#message);
    try {
      await this.#transport.sendMail({
        from: this.#envelope.from,
        to: this.#envelope.to,
        subject: message.subject,
        text: message.text,
        messageId: message.messageId,
        headers: { 'Auto-Submitted': 'auto-generated' },
      });
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      throw new SinkError(
        `email sink "${this.name}": ${this.#where}: sending ${records.length} change(s) failed: ${text}`,
        { retryable: isRetryableSmtpError(err), cause: err },
      );
    }
  }
}
