/**
 * A scripted in-memory WatchTransport for watcher unit tests (no sockets): each request takes the
 * next step of the script, which answers with a list body, a watch body, an error, or a stream
 * that stays open (optionally silent) until the watcher aborts it.
 */
import { apiErrorFromResponse } from '../../../src/errors/api-error.js';
import { TransportError } from '../../../src/errors/raven-error.js';
import type { ResolvedResource } from '../../../src/client/api-resource.js';
import type { WatchTransport } from '../../../src/watch/watcher.js';
import type { Clock } from '../../../src/util/clock.js';

export interface Recorded {
  path: string;
  query: Record<string, string>;
}

export type Step =
  | { status: number; body?: unknown; retryAfter?: string }
  | { list: { items: object[]; resourceVersion: string; continue?: string } }
  /** `endAfterMs`: with `then: 'end'`, the stream ends that many virtual ms after it opened. */
  | { events: object[]; then?: 'end' | 'hang' | 'reset'; endAfterMs?: number }
  | { refuse: true };

export class FakeTransport implements WatchTransport {
  readonly requests: Recorded[] = [];
  readonly #script: Step[];

  readonly #clock: Clock | undefined;

  constructor(script: Step[], clock?: Clock) {
    this.#script = [...script];
    this.#clock = clock;
  }

  get remaining(): number {
    return this.#script.length;
  }

  push(...steps: Step[]): void {
    this.#script.push(...steps);
  }

  async stream(request: {
    path: string;
    query?: Record<string, string | number | boolean | undefined>;
    signal?: AbortSignal;
  }): Promise<{ statusCode: number; body: AsyncIterable<Uint8Array> }> {
    const query: Record<string, string> = {};
    for (const [k, v] of Object.entries(request.query ?? {})) if (v !== undefined) query[k] = String(v);
    this.requests.push({ path: request.path, query });
    const step = this.#script.shift();
    const signal = request.signal;
    if (step === undefined) {
      // Past the script: a stream that never says anything, until aborted.
      return { statusCode: 200, body: chunks([], 'hang', signal) };
    }
    await Promise.resolve();
    if ('refuse' in step) throw new TransportError('connect ECONNREFUSED 127.0.0.1');
    if ('status' in step) {
      throw apiErrorFromResponse(
        step.status,
        JSON.stringify(step.body ?? ''),
        { method: 'GET', path: request.path },
        step.retryAfter,
      );
    }
    if ('list' in step) {
      const body = JSON.stringify({
        kind: 'PodList',
        apiVersion: 'v1',
        metadata: { resourceVersion: step.list.resourceVersion, continue: step.list.continue },
        items: step.list.items,
      });
      return { statusCode: 200, body: chunks([body], 'end', signal) };
    }
    const lines = step.events.map((e) => JSON.stringify(e) + '\n');
    const clock = this.#clock;
    const delay =
      step.endAfterMs === undefined || clock === undefined
        ? undefined
        : new Promise<void>((resolve) => clock.setTimeout(resolve, step.endAfterMs ?? 0));
    return { statusCode: 200, body: chunks(lines, step.then ?? 'end', signal, delay) };
  }
}

async function* chunks(
  parts: string[],
  then: 'end' | 'hang' | 'reset',
  signal?: AbortSignal,
  endDelay?: Promise<void>,
): AsyncGenerator<Uint8Array> {
  for (const part of parts) {
    await Promise.resolve();
    yield Buffer.from(part);
  }
  if (endDelay !== undefined) await endDelay;
  if (then === 'reset') throw new TransportError('read ECONNRESET');
  if (then === 'hang') {
    await new Promise<void>((_, reject) => {
      if (signal?.aborted === true) reject(new TransportError('aborted'));
      signal?.addEventListener('abort', () => reject(new TransportError('aborted')), { once: true });
    });
  }
}

/** The core pods resource, as discovery resolves it: what the scripted pods are watched as. */
export const PODS: ResolvedResource = {
  group: '',
  version: 'v1',
  resource: 'pods',
  singular: 'pod',
  kind: 'Pod',
  namespaced: true,
  verbs: ['list', 'watch'],
  shortNames: ['po'],
  categories: [],
  subresources: [],
  preferred: true,
};

export function pod(name: string, rv: string, extra: Record<string, unknown> = {}): object {
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: rv, labels: { app: 'web' } },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
    ...extra,
  };
}

export function ev(type: string, object: object): object {
  return { type, object };
}

export function bookmark(rv: string, annotations?: Record<string, string>): object {
  return {
    type: 'BOOKMARK',
    object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: rv, annotations } },
  };
}

export function status(code: number, reason: string, message = reason): object {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message };
}
