/**
 * Posts each change event to a chat product's incoming webhook (Slack, Mattermost, Microsoft
 * Teams workflows, Discord) in that product's own message format (`chat-messages.ts`).
 *
 * Classification is the webhook's (2xx delivered; 408, 429, 5xx and network failures retryable);
 * Discord's 429 carries the wait as `retry_after` (seconds) in its JSON body, which is honoured.
 * The webhook URL is a credential and never appears in errors.
 */
import type { Dispatcher } from 'undici';
import { ConfigError } from '../../errors/raven-error.js';
import type { Clock } from '../../util/clock.js';
import type { SinkRecord } from '../gap-notice.js';
import { chatMessage, type ChatMessageOptions, type ChatPlatform } from './chat-messages.js';
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
 * const sink = new ChatSink({ name: 'ops', platform: 'slack', url: process.env.SLACK_WEBHOOK_URL });
 */
export class ChatSink implements Sink {
  readonly name: string;
  readonly platform: ChatPlatform;
  readonly #options: ChatSinkOptions;
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
    this.#pool = new SinkPool(options.dispatcher);
  }

  async deliver(event: SinkRecord, signal: AbortSignal): Promise<void> {
    const body = JSON.stringify(chatMessage(this.platform, event, this.#options));
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

  /** Close the sink's own connections (a given dispatcher is left open). */
  async close(): Promise<void> {
    await this.#pool.close();
  }
}
