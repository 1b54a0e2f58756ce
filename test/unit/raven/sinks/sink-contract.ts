/**
 * The contract every {@link Sink} keeps (see `src/raven/sinks/sink.ts`). Call {@link sinkContract}
 * from a test file with a harness that builds the sink against a receiver it can read back and make
 * fail. A sink that cannot fail in one of the ways gives the reason, and that test is skipped with it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SinkError } from '../../../../src/errors/raven-error.js';
import type { Sink } from '../../../../src/raven/sinks/sink.js';
import { attributedEvent, sampleEvent } from './fixtures.js';

export interface SinkUnderTest {
  sink: Sink;
  /** Everything the receiving end got, one string per delivery. */
  received: () => Promise<string[]>;
  cleanup: () => Promise<void>;
}

export interface SinkContractHarness {
  /** A sink whose receiver accepts everything. */
  healthy: () => Promise<SinkUnderTest>;
  /** A sink whose receiver fails in a way a retry may fix (a 500, a write error), or why there is none. */
  transient: (() => Promise<SinkUnderTest>) | { skip: string };
  /** A sink whose receiver refuses in a way a retry cannot fix (a 400, a closed stream), or why there is none. */
  permanent: (() => Promise<SinkUnderTest>) | { skip: string };
}

async function using(
  make: () => Promise<SinkUnderTest>,
  body: (s: SinkUnderTest) => Promise<void>,
): Promise<void> {
  const s = await make();
  try {
    await body(s);
  } finally {
    await s.sink.close?.();
    await s.cleanup();
  }
}

export function sinkContract(name: string, harness: SinkContractHarness): void {
  describe(`${name} sink contract`, () => {
    test('delivers a sample event that the receiver sees once, naming the object', async () => {
      await using(harness.healthy, async ({ sink, received }) => {
        const event = sampleEvent({ name: 'contract-object' });
        await sink.deliver(event, new AbortController().signal);
        const got = await received();
        assert.equal(got.length, 1);
        assert.match(got[0] ?? '', /contract-object/);
      });
    });

    test('a modification carries who made it: each manager, its operation, its time and the paths it changed', async () => {
      await using(harness.healthy, async ({ sink, received }) => {
        const event = attributedEvent();
        await sink.deliver(event, new AbortController().signal);
        const [got = ''] = await received();
        // The record's changedBy as JSON (at any depth: a CloudEvent's data), or the CLI's words
        // beside each diff line in a text sink (after a mail's quoted-printable encoding).
        const record = changedByIn(got);
        if (record !== undefined) assert.deepEqual(record, event.changedBy);
        else {
          const text = got
            .replace(/=\r?\n/g, '')
            .replace(/(?:=[0-9A-F]{2})+/g, (q) => Buffer.from(q.replaceAll('=', ''), 'hex').toString('utf8'));
          assert.match(text, /spec\.replicas: 2 → 3 {2}by scaler \(Update\) at 10:42:07/, got);
          assert.match(
            text,
            /status\.observedGeneration: 4 → 5 {2}by kube-controller-manager \(Update status\) at 10:42:08/,
            got,
          );
        }
      });
    });

    test('events are delivered in the order they are given', async () => {
      await using(harness.healthy, async ({ sink, received }) => {
        for (const n of ['first-obj', 'second-obj', 'third-obj'])
          await sink.deliver(sampleEvent({ name: n }), new AbortController().signal);
        const got = await received();
        assert.deepEqual(
          got.map((text) => /(first|second|third)-obj/.exec(text)?.[0]),
          ['first-obj', 'second-obj', 'third-obj'],
        );
      });
    });

    test('an aborted signal rejects without delivering', async () => {
      await using(harness.healthy, async ({ sink, received }) => {
        const controller = new AbortController();
        controller.abort(new Error('shutting down'));
        await assert.rejects(sink.deliver(sampleEvent(), controller.signal), /shutting down/);
        assert.deepEqual(await received(), []);
      });
    });

    const transient = harness.transient;
    test(
      'a failure a retry may fix throws a SinkError marked retryable',
      typeof transient === 'function' ? {} : { skip: transient.skip },
      async () => {
        if (typeof transient !== 'function') return;
        await using(transient, async ({ sink }) => {
          await assert.rejects(sink.deliver(sampleEvent(), new AbortController().signal), (err) => {
            assert.ok(err instanceof SinkError, `expected a SinkError, got ${String(err)}`);
            assert.equal(err.retryable, true);
            return true;
          });
        });
      },
    );

    const permanent = harness.permanent;
    test(
      'a refusal a retry cannot fix throws a SinkError marked not retryable',
      typeof permanent === 'function' ? {} : { skip: permanent.skip },
      async () => {
        if (typeof permanent !== 'function') return;
        await using(permanent, async ({ sink }) => {
          await assert.rejects(sink.deliver(sampleEvent(), new AbortController().signal), (err) => {
            assert.ok(err instanceof SinkError, `expected a SinkError, got ${String(err)}`);
            assert.equal(err.retryable, false);
            return true;
          });
        });
      },
    );
  });
}

/**
 * The first `changedBy` in a delivery that is JSON (one document, one per line, or after a
 * header such as syslog's), at any depth.
 */
function changedByIn(text: string): unknown {
  const find = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null) return undefined;
    if ('changedBy' in value) return value.changedBy;
    for (const inner of Object.values(value)) {
      const found = find(inner);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  for (const candidate of [text, text.slice(Math.max(0, text.indexOf('{'))), ...text.split('\n')]) {
    try {
      const found = find(JSON.parse(candidate));
      if (found !== undefined) return found;
    } catch {
      // not JSON
    }
  }
  return undefined;
}
