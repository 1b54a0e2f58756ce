/**
 * The list+watch state machine as a table: each row is a state that ran, how it ended, the
 * context, and the state that must follow. `nextDelay` answers 100 ms after an error and 7 ms
 * after an empty stream, so a row says which of the two waits was chosen.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../../src/errors/api-error.js';
import { TransportError } from '../../../src/errors/raven-error.js';
import {
  initialState,
  type ListFrom,
  transition,
  type Outcome,
  type TransitionContext,
  type WatcherState,
} from '../../../src/watch/watcher-state.js';

const status = (code: number, reason: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  message: reason,
  reason,
  code,
});
const expired = new ApiError(410, status(410, 'Expired'));
const invalid = new ApiError(400, status(400, 'BadRequest'));
const unavailable = new ApiError(503, status(503, 'ServiceUnavailable'));
const reset = new TransportError('socket hang up');

const consistent = { kind: 'consistent' } as const;
const fromRv = (resourceVersion: string) => ({ kind: 'notOlderThan', resourceVersion }) as const;
const list = (from: ListFrom = consistent, paged = true): WatcherState => ({
  kind: 'list',
  from,
  paged,
});
const watchList = (from: ListFrom = consistent): WatcherState => ({
  kind: 'watchList',
  from,
});
const watch = (resourceVersion: string): WatcherState => ({ kind: 'watch', resourceVersion });
const afterError = (then: WatcherState): WatcherState => ({ kind: 'backoff', delayMs: 100, then });
const afterEmpty = (then: WatcherState): WatcherState => ({ kind: 'backoff', delayMs: 7, then });

interface Row {
  name: string;
  state: WatcherState;
  outcome: Outcome;
  ctx?: Partial<Omit<TransitionContext, 'nextDelay'>>;
  next: WatcherState;
}

const ended = (o: { lived?: number; delivered?: boolean; listed?: boolean } = {}): Outcome => ({
  kind: 'ended',
  lived: o.lived ?? 0,
  delivered: o.delivered ?? false,
  ...(o.listed === undefined ? {} : { listed: o.listed }),
});
const failed = (error: unknown, more: { continued?: boolean; listed?: boolean } = {}): Outcome => ({
  kind: 'failed',
  error,
  ...more,
});

const rows: Row[] = [
  // list
  {
    name: 'a list that listed watches from its resourceVersion',
    state: list(),
    outcome: { kind: 'listed', resourceVersion: '50' },
    next: watch('50'),
  },
  {
    name: 'a 410 on a continue token lists once more, unpaged',
    state: list(fromRv('9')),
    outcome: failed(expired, { continued: true }),
    next: list(fromRv('9'), false),
  },
  {
    name: 'a 410 on a not-older-than list falls back to a consistent list',
    state: list(fromRv('9')),
    outcome: failed(expired),
    next: list(),
  },
  {
    name: 'a 410 on a consistent list backs off and lists again',
    state: list(),
    outcome: failed(expired),
    next: afterError(list()),
  },
  {
    name: 'a failed list backs off and lists from the same point, paged',
    state: list(fromRv('9'), false),
    outcome: failed(unavailable),
    next: afterError(list(fromRv('9'))),
  },
  {
    name: 'a list that was aborted stops',
    state: list(),
    outcome: { kind: 'aborted' },
    next: { kind: 'stopped' },
  },
  // watchList
  {
    name: 'a streaming list refused as invalid falls back to list+watch',
    state: watchList(fromRv('9')),
    outcome: failed(invalid),
    next: list(fromRv('9')),
  },
  {
    name: 'a streaming list the caller turned off falls back to list+watch',
    state: watchList(),
    outcome: failed(unavailable),
    ctx: { watchList: false },
    next: list(),
  },
  {
    name: 'a 410 on a not-older-than streaming list streams a consistent one',
    state: watchList(fromRv('9')),
    outcome: failed(expired),
    next: watchList(),
  },
  {
    name: 'a failed streaming list backs off and streams again',
    state: watchList(),
    outcome: failed(reset),
    next: afterError(watchList()),
  },
  {
    name: 'a streaming list not served lists instead',
    state: watchList(fromRv('3')),
    outcome: { kind: 'notServed', reason: 'no bookmark' },
    next: list(fromRv('3')),
  },
  {
    name: 'a streaming list that ended past its bookmark resumes as a watch',
    state: watchList(),
    outcome: ended({ listed: true, delivered: true }),
    ctx: { resourceVersion: '70' },
    next: watch('70'),
  },
  {
    name: 'a streaming list that failed past its bookmark with 410 relists',
    state: watchList(),
    outcome: failed(expired, { listed: true }),
    ctx: { resourceVersion: '70' },
    next: watchList(fromRv('70')),
  },
  {
    name: 'a streaming list that ended at once with nothing backs off',
    state: watchList(),
    outcome: ended(),
    next: afterEmpty(watchList()),
  },
  {
    name: 'a streaming list that ended after delivering streams again',
    state: watchList(),
    outcome: ended({ delivered: true }),
    next: watchList(),
  },
  // watch
  {
    name: 'a 410 during a watch relists not older than the last resourceVersion',
    state: watch('70'),
    outcome: failed(expired),
    ctx: { resourceVersion: '72' },
    next: watchList(fromRv('72')),
  },
  {
    name: 'a 410 during a watch relists with a list when watchList is off',
    state: watch('70'),
    outcome: failed(expired),
    ctx: { resourceVersion: '72', watchList: false },
    next: list(fromRv('72')),
  },
  {
    name: 'a failed watch backs off and resumes from the last resourceVersion, never relists',
    state: watch('70'),
    outcome: failed(reset),
    ctx: { resourceVersion: '75' },
    next: afterError(watch('75')),
  },
  {
    name: 'a watch that delivered and ended resumes at once',
    state: watch('70'),
    outcome: ended({ delivered: true }),
    ctx: { resourceVersion: '80' },
    next: watch('80'),
  },
  {
    name: 'a quiet watch that lived long resumes at once',
    state: watch('70'),
    outcome: ended({ lived: 30_000 }),
    ctx: { resourceVersion: '70' },
    next: watch('70'),
  },
  {
    name: 'a watch that ended at once with nothing backs off',
    state: watch('70'),
    outcome: ended({ lived: 5 }),
    ctx: { resourceVersion: '70' },
    next: afterEmpty(watch('70')),
  },
  {
    name: 'a watch aborted stops',
    state: watch('70'),
    outcome: { kind: 'aborted' },
    next: { kind: 'stopped' },
  },
  // backoff and stopped
  {
    name: 'a backoff that waited enters the state it was for',
    state: afterError(watch('70')),
    outcome: { kind: 'waited' },
    next: watch('70'),
  },
  {
    name: 'a backoff aborted stops',
    state: afterError(watch('70')),
    outcome: { kind: 'aborted' },
    next: { kind: 'stopped' },
  },
  {
    name: 'stopped stays stopped',
    state: { kind: 'stopped' },
    outcome: { kind: 'waited' },
    next: { kind: 'stopped' },
  },
];

for (const row of rows) {
  test(row.name, () => {
    const ctx: TransitionContext = {
      resourceVersion: undefined,
      watchList: true,
      stableMs: 30_000,
      nextDelay: (error) => (error === undefined ? 7 : 100),
      ...row.ctx,
    };
    assert.deepEqual(transition(row.state, row.outcome, ctx), row.next);
  });
}

test('the first state is a streaming list, or a paged consistent list without it', () => {
  assert.deepEqual(initialState(true), watchList());
  assert.deepEqual(initialState(false), list());
});
