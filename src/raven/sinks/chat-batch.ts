/**
 * Keeps a chat channel quiet: deliveries that arrive close together go out as one post, posts are
 * spaced, and a receiver's rate limit pauses the whole sink, not just the delivery that hit it.
 *
 * - **Batch**: the first delivery opens a window (`batchWindowMs`); every delivery that arrives
 *   before it closes, up to `batchMaxItems`, joins it, and the window's messages are posted as one
 *   message. Each delivery settles with that post: resolved when the receiver accepted it,
 *   rejected with its error otherwise (the delivery layer then retries each change, and it joins
 *   a later batch). A batch is acknowledged as one delivery: at least once holds.
 * - **Digest**: what the sink chose not to post on its own (status-only churn, a repeat of the
 *   object's previous message) is counted per object and posted as one line per object with the
 *   next batch; noting it opens a window too, so the digest never waits for another change.
 * - **Throttle**: at most one post per `perSinkMs`, one post at a time, in order; an object's next
 *   message waits until `perObjectMs` after its previous one. A 429 (or 503) with Retry-After
 *   (read by `http-post.ts` with the project's one parser) pauses every post of the sink until
 *   then.
 *
 * Time comes from the injected clock, so tests run on virtual time.
 */
import { abortReason } from '../../util/signals.js';
import type { Clock, TimerHandle } from '../../util/clock.js';
import { sinkRetryAfterMs } from './sink-http-error.js';

export interface ChatBatchOptions {
  /** How long a batch stays open after its first delivery; 0 posts each delivery alone. */
  batchWindowMs: number;
  /** Most messages in one post. */
  batchMaxItems: number;
  /** Least time between two posts of the sink. */
  perSinkMs: number;
  /** Least time between two posts about one object; 0: no limit. */
  perObjectMs: number;
}

export interface ChatBatchDeps {
  clock: Clock;
  /** Post one body (throws a SinkError on failure). */
  post: (body: object, signal: AbortSignal) => Promise<void>;
  /** Several message bodies as one. */
  combine: (bodies: readonly object[]) => object;
  /** A line of the digest as a message body. */
  line: (text: string) => object;
}

interface Entry {
  body: object;
  object: string | undefined;
  signal: AbortSignal;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** What was not posted about one object since its last message. */
interface DigestLine {
  /** `Deployment shop/web`. */
  label: string;
  changes: number;
  repeats: number;
  /** The latest change's lines (`status.readyReplicas: 1 → 3`). */
  latest: readonly string[];
}

/** Objects whose last post time is remembered (for perObjectMs); the oldest are forgotten first. */
const MAX_REMEMBERED_OBJECTS = 10_000;

export class ChatBatch {
  readonly #o: ChatBatchOptions;
  readonly #d: ChatBatchDeps;
  #open: Entry[] = [];
  #timer: TimerHandle | undefined;
  readonly #digest = new Map<string, DigestLine>();
  #posting: Promise<void> = Promise.resolve();
  #lastPostAt = Number.NEGATIVE_INFINITY;
  #pausedUntil = 0;
  readonly #postedAt = new Map<string, number>();

  constructor(options: ChatBatchOptions, deps: ChatBatchDeps) {
    this.#o = options;
    this.#d = deps;
  }

  /**
   * Post `body` with the next batch; resolves when that post was accepted. `object` (an object
   * key) applies the per-object spacing.
   */
  async submit(body: object, object: string | undefined, signal: AbortSignal): Promise<void> {
    const last = object === undefined ? undefined : this.#postedAt.get(object);
    if (last !== undefined && this.#o.perObjectMs > 0)
      await this.#sleep(last + this.#o.perObjectMs - this.#d.clock.now(), signal);
    if (signal.aborted) throw abortReason(signal);
    return new Promise<void>((resolve, reject) => {
      this.#open.push({ body, object, signal, resolve, reject });
      if (this.#open.length >= this.#o.batchMaxItems) this.#flush();
      else this.#startWindow();
    });
  }

  /** Count a change of `object` that is not posted on its own (`repeat`: same message as before). */
  note(object: string, label: string, kind: 'change' | 'repeat', latest: readonly string[]): void {
    const line = this.#digest.get(object) ?? { label, changes: 0, repeats: 0, latest: [] };
    if (kind === 'change') {
      line.changes++;
      line.latest = latest;
    } else line.repeats++;
    this.#digest.set(object, line);
    this.#startWindow();
  }

  /** Post what is open now and wait for every post in progress. */
  async flush(): Promise<void> {
    this.#flush();
    await this.#posting;
  }

  #startWindow(): void {
    if (this.#timer !== undefined) return;
    if (this.#o.batchWindowMs <= 0) {
      this.#flush();
      return;
    }
    this.#timer = this.#d.clock.setTimeout(() => {
      this.#timer = undefined;
      this.#flush();
    }, this.#o.batchWindowMs);
  }

  #flush(): void {
    if (this.#timer !== undefined) this.#d.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    const entries = this.#open.splice(0);
    const digest = [...this.#digest.entries()];
    this.#digest.clear();
    if (entries.length === 0 && digest.length === 0) return;
    this.#posting = this.#posting.then(() => this.#post(entries, digest));
  }

  async #post(entries: Entry[], digest: [string, DigestLine][]): Promise<void> {
    const live = entries.filter((e) => {
      if (e.signal.aborted) e.reject(abortReason(e.signal));
      return !e.signal.aborted;
    });
    if (live.length === 0 && digest.length === 0) return;
    const signal = live[0]?.signal ?? new AbortController().signal;
    try {
      await this.#sleep(
        Math.max(this.#lastPostAt + this.#o.perSinkMs, this.#pausedUntil) - this.#d.clock.now(),
        signal,
      );
      const bodies = [
        ...live.map((e) => e.body),
        ...digest.map(([, line]) => this.#d.line(digestText(line))),
      ];
      await this.#d.post(this.#d.combine(bodies), signal);
    } catch (err) {
      this.#lastPostAt = this.#d.clock.now();
      const wait = sinkRetryAfterMs(err);
      if (wait !== undefined) this.#pausedUntil = Math.max(this.#pausedUntil, this.#d.clock.now() + wait);
      for (const e of live) e.reject(err);
      // The digest has no delivery of its own to retry it: it goes out with the next post.
      if (!signal.aborted) for (const [object, line] of digest) this.#merge(object, line);
      return;
    }
    const now = this.#d.clock.now();
    this.#lastPostAt = now;
    for (const e of live) {
      if (e.object !== undefined) this.#remember(e.object, now);
      e.resolve();
    }
    for (const [object] of digest) this.#remember(object, now);
  }

  #merge(object: string, line: DigestLine): void {
    const newer = this.#digest.get(object);
    this.#digest.set(object, {
      label: line.label,
      changes: line.changes + (newer?.changes ?? 0),
      repeats: line.repeats + (newer?.repeats ?? 0),
      latest: newer !== undefined && newer.changes > 0 ? newer.latest : line.latest,
    });
    this.#startWindow();
  }

  #remember(object: string, at: number): void {
    this.#postedAt.delete(object);
    this.#postedAt.set(object, at);
    if (this.#postedAt.size > MAX_REMEMBERED_OBJECTS) {
      const oldest = this.#postedAt.keys().next().value;
      if (oldest !== undefined) this.#postedAt.delete(oldest);
    }
  }

  #sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#d.clock.clearTimeout(timer);
        reject(abortReason(signal));
      };
      const timer = this.#d.clock.setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** `Deployment shop/web: 6 status-only changes since its last message; latest: status.readyReplicas: 1 → 3`. */
function digestText(line: DigestLine): string {
  const parts: string[] = [];
  if (line.changes > 0)
    parts.push(
      `${line.changes} status-only change${line.changes === 1 ? '' : 's'} since its last message` +
        (line.latest.length > 0 ? `; latest: ${line.latest.join('; ')}` : ''),
    );
  if (line.repeats > 0)
    parts.push(`the same message ${line.repeats} more time${line.repeats === 1 ? '' : 's'}`);
  return `${line.label}: ${parts.join('; ')}`;
}
