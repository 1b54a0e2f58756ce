/**
 * The list+watch state machine, as data: the states, the outcomes of running one, and the single
 * transition function between them. The effects (HTTP, decoding, timers) live in `watcher.ts`.
 *
 * ```
 *            listed                          ended (delivered, or lived long)
 *   list ───────────────▶ watch(rv) ◀────────────────────────┐
 *    ▲  ▲                  │  │ ended quickly / error        │
 *    │  │ 410              │  └──▶ backoff ──▶ watch(last rv)┘
 *    │  │                  │       (short after connection failures, exponential after answers)
 *    │  └──────────────────┘
 *    │ not supported (400, or no initial-events-end bookmark)
 *   watchList ── initial-events-end bookmark ──▶ (continues as a watch)
 * ```
 *
 * - A 410 during a watch relists "not older than" the last resourceVersion; a 410 on that relist
 *   falls back to a consistent list (resourceVersion unset).
 * - A 410 on a `continue` token restarts the list once without `limit` (one full list).
 * - Every other failure waits (see `reconnect-policy.ts`: briefly after connection failures,
 *   exponentially after failed answers, as told by Retry-After) and retries the same step; a watch
 *   retries from the last resourceVersion seen — never a relist.
 * - A server that ignores sendInitialEvents (streams a plain watch, never the initial-events-end
 *   bookmark) is detected by the watcher, which turns watchList off for the rest of its life.
 * - resourceVersions are opaque: only ever compared for equality.
 */
import { isExpired, isInvalid } from '../errors/classify.js';

/** Which resourceVersion a list asks for. */
export type ListFrom =
  /** resourceVersion unset: a consistent read from etcd. */
  | { kind: 'consistent' }
  /** resourceVersion=rv, resourceVersionMatch=NotOlderThan: served from the watch cache. */
  | { kind: 'notOlderThan'; resourceVersion: string };

export type WatcherState =
  | { kind: 'list'; from: ListFrom; paged: boolean }
  | { kind: 'watchList'; from: ListFrom }
  | { kind: 'watch'; resourceVersion: string }
  | { kind: 'backoff'; delayMs: number; then: WatcherState }
  | { kind: 'stopped' };

/** How running a state ended. */
export type Outcome =
  /** A list finished at `resourceVersion` (for watchList: the initial-events-end bookmark, and the stream went on). */
  | { kind: 'listed'; resourceVersion: string }
  /**
   * A watch stream ended without error, `lived` ms after it opened; `delivered` says whether it
   * carried any event or bookmark. For watchList, `listed` says whether the initial-events-end
   * bookmark had arrived (the stream had become a plain watch).
   */
  | { kind: 'ended'; lived: number; delivered: boolean; listed?: boolean }
  /** A request or stream failed. `continued`: the list had used a continue token; `listed` as above. */
  | { kind: 'failed'; error: unknown; continued?: boolean; listed?: boolean }
  /**
   * A streaming initial list was answered as a plain watch (no initial-events-end bookmark): the
   * server ignores sendInitialEvents. The caller turns watchList off.
   */
  | { kind: 'notServed'; reason: string }
  | { kind: 'waited' }
  | { kind: 'aborted' };

export interface TransitionContext {
  /** The last resourceVersion seen, if any. */
  resourceVersion: string | undefined;
  /** Whether the streaming initial list may be tried (off for good once the server showed it does not serve it). */
  watchList: boolean;
  /** A stream that lived at least this long ended normally: resume at once. */
  stableMs: number;
  /**
   * The wait before retrying after `error`, or after a stream that ended at once with nothing
   * (`undefined`); records the failure. See `reconnect-policy.ts`.
   */
  nextDelay(error: unknown): number;
}

/** The state to enter first. */
export function initialState(watchList: boolean): WatcherState {
  return watchList
    ? { kind: 'watchList', from: { kind: 'consistent' } }
    : { kind: 'list', from: { kind: 'consistent' }, paged: true };
}

/** The list to run after a 410 during a watch. */
function relist(ctx: TransitionContext): WatcherState {
  const from: ListFrom =
    ctx.resourceVersion === undefined
      ? { kind: 'consistent' }
      : { kind: 'notOlderThan', resourceVersion: ctx.resourceVersion };
  return ctx.watchList ? { kind: 'watchList', from } : { kind: 'list', from, paged: true };
}

function backoff(ctx: TransitionContext, error: unknown, then: WatcherState): WatcherState {
  return { kind: 'backoff', delayMs: ctx.nextDelay(error), then };
}

/** Resume a watch from where it stopped, or relist when nothing was ever seen. */
function resume(ctx: TransitionContext): WatcherState {
  return ctx.resourceVersion === undefined
    ? relist(ctx)
    : { kind: 'watch', resourceVersion: ctx.resourceVersion };
}

/**
 * The transition function: given the state that ran and how it ended, the next state.
 * `ctx.watchList` may be turned off by the caller when this returns a fallback from watchList.
 */
export function transition(state: WatcherState, outcome: Outcome, ctx: TransitionContext): WatcherState {
  if (outcome.kind === 'aborted') return { kind: 'stopped' };
  switch (state.kind) {
    case 'list':
      if (outcome.kind === 'listed') return { kind: 'watch', resourceVersion: outcome.resourceVersion };
      if (outcome.kind === 'failed' && isExpired(outcome.error)) {
        if (outcome.continued === true) return { kind: 'list', from: state.from, paged: false };
        if (state.from.kind === 'notOlderThan')
          return { kind: 'list', from: { kind: 'consistent' }, paged: true };
      }
      return backoff(ctx, outcome.kind === 'failed' ? outcome.error : undefined, {
        kind: 'list',
        from: state.from,
        paged: true,
      });
    case 'watchList':
      // Past the initial-events-end bookmark the stream was a plain watch: recover as one.
      if ((outcome.kind === 'failed' || outcome.kind === 'ended') && outcome.listed === true) {
        return transition({ kind: 'watch', resourceVersion: ctx.resourceVersion ?? '' }, outcome, ctx);
      }
      if (outcome.kind === 'failed') {
        // Not served (400), or served as a plain watch with no initial-events-end bookmark: the
        // caller turned watchList off; list+watch from now on.
        if (!ctx.watchList || isInvalid(outcome.error))
          return { kind: 'list', from: state.from, paged: true };
        if (isExpired(outcome.error) && state.from.kind === 'notOlderThan') {
          return { kind: 'watchList', from: { kind: 'consistent' } };
        }
        return backoff(ctx, outcome.error, state);
      }
      if (outcome.kind === 'ended') return afterEnd(ctx, outcome, state);
      if (outcome.kind === 'notServed') return { kind: 'list', from: state.from, paged: true };
      return resume(ctx);
    case 'watch':
      if (outcome.kind === 'failed') {
        if (isExpired(outcome.error)) return relist(ctx);
        return backoff(ctx, outcome.error, resume(ctx));
      }
      if (outcome.kind === 'ended') return afterEnd(ctx, outcome, resume(ctx));
      return resume(ctx);
    case 'backoff':
      return state.then;
    case 'stopped':
      return state;
    default: {
      const unreachable: never = state;
      return unreachable;
    }
  }
}

/**
 * A stream that delivered events, or lived long, ended as streams do (timeoutSeconds, a proxy's
 * idle limit): resume now. One that ended at once with nothing: back off.
 */
function afterEnd(
  ctx: TransitionContext,
  outcome: { lived: number; delivered: boolean },
  next: WatcherState,
): WatcherState {
  if (outcome.delivered || outcome.lived >= ctx.stableMs) return next;
  return { kind: 'backoff', delayMs: ctx.nextDelay(undefined), then: next };
}
