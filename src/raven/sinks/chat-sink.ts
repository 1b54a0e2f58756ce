/**
 * Posts each change event to a chat product's incoming webhook (Slack, Mattermost, Microsoft
 * Teams workflows, Discord) in that product's own message format (`chat-messages.ts`).
 *
 * Classification is the webhook's (2xx delivered; 408, 429, 5xx and network failures retryable);
 * Discord's 429 carries the wait as `retry_after` (seconds) in its JSON body, which is honoured.
 * The webhook URL is a credential and never appears in errors.
 *
 * Quiet by default (`chat-batch.ts`): changes that arrive within `batch.windowSeconds` go out as
 * one post (each change acknowledged with it), posts are spaced by `throttle.perSinkSeconds`, a
 * Retry-After pauses the whole sink, status-only changes are grouped into one digest line per
 * object, and a message identical to the object's previous one, about the same change (same
 * type and diff), is counted instead of posted: a distinct change is always posted, even where a
 * template renders it as the same text.
 */
import type { Dispatcher } from 'undici';
import { ConfigError } from '../../errors/raven-error.js';
import type { Clock } from '../../util/clock.js';
import type { SinkRecord } from '../model/gap-notice.js';
import { systemClock } from '../../util/clock.js';
import { eventObjectKey, type ChangeEvent } from '../model/change-event.js';
import {
  chatBatchMessage,
  chatMessage,
  textMessage,
  type ChatMessageOptions,
  type ChatPlatform,
} from './chat-messages.js';
import { ChatBatch, type ChatBatchOptions } from './chat-batch.js';
import { eventLines } from './event-summary.js';
import { checkUrl, httpPost, SinkPool } from './http-post.js';
import type { Sink } from './sink.js';

export interface ChatSinkOptions extends ChatMessageOptions {
  name: string;
  platform: ChatPlatform;
  /** The incoming webhook URL. */
  url: string;
  /** Default 10 000 ms. */
  timeoutMs?: number;
  dispatcher?: Dispatcher;
  clock?: Clock;
  /** Batching and spacing; default: 2 s windows of up to 20, 1 s between posts, no per-object limit. */
  quiet?: Partial<ChatBatchOptions>;
  /** `group` (default): status-only changes become one digest line per object; `post`: each its own message. */
  statusOnly?: 'group' | 'post';
  /** Count a message identical to the object's previous one (same text, same change) instead of posting it; default true. */
  dedupe?: boolean;
}

export const CHAT_QUIET_DEFAULTS: ChatBatchOptions = {
  batchWindowMs: 2_000,
  batchMaxItems: 20,
  perSinkMs: 1_000,
  perObjectMs: 0,
};

/** Messages remembered for de-duplication, per object; the oldest are forgotten first. */
const MAX_FINGERPRINTS = 10_000;

/** Whether every changed field is under `status` (the controller reporting, not someone changing the spec). */
export function isStatusOnly(event: ChangeEvent): boolean {
  return (
    event.type === 'modified' &&
    event.diff.length > 0 &&
    event.diff.every(
      (d) => d.path === 'status' || d.path.startsWith('status.') || d.path.startsWith('status['),
    )
  );
}

const PLATFORMS: readonly ChatPlatform[] = ['slack', 'mattermost', 'teams', 'discord'];

/** Discord's rate-limit answer: `{ "retry_after": 1.5, ... }` in seconds. */
export function discordRetryAfterMs(statusCode: number, body: string): number | undefined {
  if (statusCode !== 429) return undefined;
  try {
    const parsed = JSON.parse(body) as unknown;
    if (typeof parsed === 'object' && parsed !== null && 'retry_after' in parsed) {
      const seconds = parsed.retry_after;
      if (typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0)
        return Math.ceil(seconds * 1000);
    }
  } catch {
    // Not JSON: fall back to the Retry-After header.
  }
  return undefined;
}

/**
 * @example
 * const sink = new ChatSink({ name: 'ops', platform: 'slack', url: 'https://hooks.slack.com/services/T000/B000/XXXX' });
 */
export class ChatSink implements Sink {
  readonly name: string;
  readonly platform: ChatPlatform;
  readonly #options: ChatSinkOptions;
  readonly #batch: ChatBatch;
  readonly #fingerprints = new Map<string, string>();
  readonly #pool: SinkPool;

  constructor(options: ChatSinkOptions) {
    if (!PLATFORMS.includes(options.platform))
      throw new ConfigError(
        `unknown chat platform "${options.platform}"; expected one of ${PLATFORMS.join(', ')}`,
        {
          path: `sinks.${options.name}.platform`,
        },
      );
    checkUrl(options.url, `sinks.${options.name}.url`);
    this.name = options.name;
    this.platform = options.platform;
    this.#options = options;
    this.#batch = new ChatBatch(
      { ...CHAT_QUIET_DEFAULTS, ...options.quiet },
      {
        clock: options.clock ?? systemClock,
        post: (body, signal) => this.#post(body, signal),
        combine: (bodies) => chatBatchMessage(this.platform, bodies),
        line: (text) => textMessage(this.platform, text, this.#options),
      },
    );
    this.#pool = new SinkPool(options.dispatcher);
  }

  async deliver(event: SinkRecord, signal: AbortSignal): Promise<void> {
    if (event.type === 'gap') {
      await this.#batch.submit(chatMessage(this.platform, event, this.#options), undefined, signal);
      return;
    }
    const key = `${event.watcher}/${event.resource.group}/${event.resource.kind}/${eventObjectKey(event)}`;
    const label = `${event.resource.kind} ${eventObjectKey(event)}`;
    if (this.#options.statusOnly !== 'post' && isStatusOnly(event)) {
      this.#batch.note(key, label, 'change', eventLines(event).slice(0, 3));
      return;
    }
    const body = chatMessage(this.platform, event, this.#options);
    if (this.#options.dedupe !== false) {
      // The message without its time, and the change itself: a template can render two different
      // changes (a scale, then an image change) as the same text, and each must still be posted.
      const fingerprint = JSON.stringify([
        chatMessage(this.platform, { ...event, time: '' }, this.#options),
        event.type,
        event.diff,
      ]);
      if (this.#fingerprints.get(key) === fingerprint) {
        this.#batch.note(key, label, 'repeat', []);
        return;
      }
      await this.#batch.submit(body, key, signal);
      // Only once posted: a failed post is retried, and the retry must not count as a repeat.
      this.#fingerprints.delete(key);
      this.#fingerprints.set(key, fingerprint);
      if (this.#fingerprints.size > MAX_FINGERPRINTS) {
        const oldest = this.#fingerprints.keys().next().value;
        if (oldest !== undefined) this.#fingerprints.delete(oldest);
      }
      return;
    }
    await this.#batch.submit(body, key, signal);
  }

  /** Post what is waiting (the open batch, the digest), then close the sink's own connections (a given dispatcher is left open). */
  async close(): Promise<void> {
    try {
      await this.#batch.flush();
    } finally {
      await this.#pool.close();
    }
  }

  async #post(message: object, signal: AbortSignal): Promise<void> {
    const body = JSON.stringify(message);
    await httpPost({
      label: `${this.platform} sink "${this.name}"`,
      url: this.#options.url,
      body,
      headers: { 'content-type': 'application/json' },
      timeoutMs: this.#options.timeoutMs ?? 10_000,
      signal,
      ...(this.platform === 'discord' ? { retryAfterFromBody: discordRetryAfterMs } : {}),
      ...(this.#options.clock === undefined ? {} : { clock: this.#options.clock }),
      dispatcher: this.#pool.dispatcher,
    });
  }
}
