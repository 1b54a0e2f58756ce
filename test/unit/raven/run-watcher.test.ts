/**
 * A watcher's loop (`pipeline/run-watcher.ts`) over the scripted in-memory transport and the fake
 * clock: the watch starts where the sinks say, every event reaches the sinks and then each tap in
 * the order the pipeline yields it, and a throw ends the loop and the watch.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRavenConfig } from '../../../src/raven/config/load-raven-config.js';
import type { PipelineEvent } from '../../../src/raven/model/pipeline-event.js';
import { runWatcher, type WatcherSide } from '../../../src/raven/pipeline/run-watcher.js';
import { WatcherPipeline } from '../../../src/raven/pipeline/watcher-pipeline.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { silentLogger } from '../../../src/util/logger.js';
import type { WatchTransport } from '../../../src/watch/watcher.js';
import { FakeTransport, PODS, bookmark, ev, pod, type Step } from '../watch/fake-transport.js';

function pipeline(): WatcherPipeline {
  const config = parseRavenConfig(
    'watchers:\n  - { name: w, resource: pods, namespaces: [ns] }\nsinks:\n  - { name: console, type: stdout }\n',
  );
  const [watcher] = config.watchers;
  assert.ok(watcher !== undefined);
  return new WatcherPipeline(watcher, PODS);
}

/** An event in one word, for comparing sequences. */
function word(event: PipelineEvent): string {
  switch (event.type) {
    case 'change':
      return `change ${event.event.type}:${event.event.name}@${event.event.resourceVersion ?? ''}`;
    case 'synced':
      return `synced ${event.resumed ? 'resumed' : 'listed'} ${event.objects.length}`;
    case 'progress':
      return `progress ${event.resourceVersion}`;
    default:
      return event.type;
  }
}

/** The loop over `script`, its sinks resuming at `a@10`; each step journaled as `who: event`. */
function loop(script: Step[], tap: (event: PipelineEvent) => void = () => undefined) {
  const clock = new FakeClock();
  const transport = new FakeTransport(script, clock);
  const signals: AbortSignal[] = [];
  const spy: WatchTransport = {
    stream: (request) => {
      if (request.signal !== undefined) signals.push(request.signal);
      return transport.stream(request);
    },
  };
  const journal: string[] = [];
  const sinks: WatcherSide = {
    start: () => {
      journal.push('sinks: start');
      return { resourceVersion: '10', objects: [pod('a', '10')] };
    },
    apply: (event) => journal.push(`sinks: ${word(event)}`),
  };
  const abort = new AbortController();
  const outcome: { ended: boolean; error?: unknown } = { ended: false };
  const done = runWatcher(
    pipeline(),
    sinks,
    [
      (event) => journal.push(`tap 1: ${word(event)}`),
      (event) => {
        journal.push(`tap 2: ${word(event)}`);
        tap(event);
      },
    ],
    { transport: spy, clock, logger: silentLogger, diffIgnore: [], signal: abort.signal },
  ).then(
    () => {
      outcome.ended = true;
    },
    (error: unknown) => {
      outcome.ended = true;
      outcome.error = error;
    },
  );
  /** Move virtual time on, 100 ms at a time, until `condition` holds (at most 10 virtual minutes). */
  const until = async (condition: () => boolean): Promise<void> => {
    for (let i = 0; i < 6000 && !condition(); i++) await clock.tick(100);
    assert.ok(condition(), `still waiting; journal: ${JSON.stringify(journal)}`);
  };
  return { clock, transport, signals, journal, abort, outcome, done, until };
}

test('starts the watch where the sinks say, and gives every event to the sinks and then to each tap, in order', async () => {
  const run = loop([{ events: [ev('MODIFIED', pod('a', '11')), bookmark('12')], then: 'hang' }]);
  await run.until(() => run.journal.includes('tap 2: progress 12'));
  assert.equal(run.transport.requests.length, 1, 'resumed: no list, one watch');
  assert.equal(run.transport.requests[0]?.query.resourceVersion, '10');
  const each = (words: string[]): string[] =>
    words.flatMap((w) => [`sinks: ${w}`, `tap 1: ${w}`, `tap 2: ${w}`]);
  assert.deepEqual(run.journal, [
    'sinks: start',
    ...each(['watching', 'synced resumed 1', 'change modified:a@11', 'progress 12']),
  ]);
  run.abort.abort(new Error('test over'));
  await run.until(() => run.outcome.ended);
  await run.done;
  assert.equal(run.outcome.error, undefined, 'an aborted watch ends the loop quietly');
});

test('a tap that throws ends the loop with its error, and the watch stops with it', async () => {
  const broken = new Error('tap broke');
  const run = loop([{ events: [ev('MODIFIED', pod('a', '11'))], then: 'hang' }], (event) => {
    if (event.type === 'change') throw broken;
  });
  await run.until(() => run.outcome.ended);
  await run.done;
  assert.equal(run.outcome.error, broken);
  assert.ok(run.signals.length > 0);
  assert.ok(
    run.signals.every((signal) => signal.aborted),
    'no watch is left open',
  );
  assert.ok(!run.journal.some((line) => line.startsWith('sinks: progress')));
});
