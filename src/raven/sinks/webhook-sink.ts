/**
 * POSTs each change event as JSON to a URL. The body is the `ChangeEvent` itself (or the
 * `GapNotice`, `type: 'gap'`, for a sink that opted in); headers:
 * `content-type: application/json`, `x-raven-event-id` (deduplicate on it: delivery is at least
 * once), `x-raven-timestamp` and, when a secret is set, `x-raven-signature` (see
 * `webhook-signature.ts` for how a receiver verifies it), plus any configured headers.
 *
 * 2xx is delivered; 408, 429, 5xx and network failures are retryable (Retry-After honoured);
 * other answers are not. The URL and secret never appear in errors.
 */
import type { Dispatcher } from 'undici';
import { systemClock, type Clock } from '../../util/clock.js';
import type { SinkRecord } from '../model/gap-notice.js';
import { checkExtraHeaders, checkUrl, httpPost, SinkPool } from './http-post.js';
import type { Sink } from './sink.js';
import { signWebhook } from './webhook-signature.js';
import { recordJson } from '../model/record-json.js';

export interface WebhookSinkOptions {
  name: string;
  url: string;
  /** Shared secret for `x-raven-signature`; no signature when absent. */
  secret?: string;
  /** Extra headers (e.g. `authorization`); may not replace `content-type` or `x-raven-*`. */
  headers?: Record<string, string>;
  /** Per request, for the answer's headers and then its body; default 10 000 ms. */
  timeoutMs?: number;
  dispatcher?: Dispatcher;
  clock?: Clock;
}

/**
 * @example
 * const sink = new WebhookSink({ name: 'audit', url: 'https://audit.example.com/raven', secret });
 * await sink.deliver(event, signal);
 */
export class WebhookSink implements Sink {
  readonly name: string;
  readonly #options: WebhookSinkOptions;
  readonly #pool: SinkPool;
  readonly #clock: Clock;

  constructor(options: WebhookSinkOptions) {
    checkExtraHeaders(options.headers, `sinks.${options.name}`);
    checkUrl(options.url, `sinks.${options.name}.url`);
    this.name = options.name;
    this.#options = options;
    this.#pool = new SinkPool(options.dispatcher);
    this.#clock = options.clock ?? systemClock;
  }

  async deliver(record: SinkRecord, signal: AbortSignal): Promise<void> {
    const body = recordJson(record);
    const timestamp = String(Math.floor(this.#clock.now() / 1000));
    const headers: Record<string, string> = {
      ...this.#options.headers,
      'content-type': 'application/json',
      'x-raven-event-id': record.id,
      'x-raven-timestamp': timestamp,
    };
    if (this.#options.secret !== undefined && this.#options.secret !== '')
      headers['x-raven-signature'] = signWebhook(this.#options.secret, timestamp, body);
    await httpPost({
      label: `webhook sink "${this.name}"`,
      url: this.#options.url,
      body,
      headers,
      timeoutMs: this.#options.timeoutMs ?? 10_000,
      signal,
      clock: this.#clock,
      dispatcher: this.#pool.dispatcher,
    });
  }

  /** Close the sink's own connections (a given dispatcher is left open). */
  async close(): Promise<void> {
    await this.#pool.close();
  }
}
