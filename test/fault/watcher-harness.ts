/**
 * Shared setup for the watcher fault tests: a scripted server, the real client pointed at it
 * through a kubeconfig file, a watcher consuming from it, and the queries a well-behaved watcher
 * must send. Everything a test starts is torn down in `t.after`, in order: watcher, client, server.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { KubeClient } from '../../src/client/kube-client.js';
import { loadConfig } from '../../src/client/load-config.js';
import { watch, type WatchTransport, type Watcher, type WatcherOptions } from '../../src/watch/watcher.js';
import type { KubeObject, WatcherEvent } from '../../src/watch/watcher-events.js';
import { ScriptedServer, type QueryCheck, type Scenario } from './scripted-server.js';

export const NAMESPACE = 'shop';
export const PODS = `/api/v1/namespaces/${NAMESPACE}/pods`;

/**
 * How long `until` lets a run go without any progress (no event, no request) before failing with
 * a description instead of leaving the test hanging. A guard against a stuck scenario, not a
 * timing assertion: a long scenario on a loaded machine keeps making progress, however slowly, so
 * it is never cut short; the longest quiet in a passing scenario is a 1 s Retry-After.
 */
const STUCK_MS = 30_000;

/** The watch timeout range every test configures, so the query check can hold the watcher to it. */
const TIMEOUT_SECONDS = { min: 60, max: 120 };

export function pod(name: string, resourceVersion: string, extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    ...extra,
    // resourceVersion last, so the decoder's peek has to scan past whatever `extra` put before it.
    metadata: { name, namespace: NAMESPACE, uid: `uid-${name}`, ...extra.metadata, resourceVersion },
  };
}

/** One watch event as the apiserver frames it: a JSON object and a newline. */
export function line(type: string, object: object): string {
  return `${JSON.stringify({ type, object })}\n`;
}

export function bookmarkLine(resourceVersion: string, annotations?: Record<string, string>): string {
  return line('BOOKMARK', {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: { resourceVersion, ...(annotations === undefined ? {} : { annotations }) },
  });
}

export function listBody(items: readonly object[], resourceVersion: string, continueToken?: string): string {
  return JSON.stringify({
    kind: 'PodList',
    apiVersion: 'v1',
    metadata: { resourceVersion, ...(continueToken === undefined ? {} : { continue: continueToken }) },
    items,
  });
}

export function statusBody(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });
}

/** A list request: exactly these parameters and no others. */
export function listQuery(
  params: { limit?: number; continue?: string; resourceVersion?: string } = {},
): QueryCheck {
  const equals: Record<string, string> = {};
  if (params.limit !== undefined) equals.limit = String(params.limit);
  if (params.continue !== undefined) equals.continue = params.continue;
  if (params.resourceVersion !== undefined) {
    equals.resourceVersion = params.resourceVersion;
    equals.resourceVersionMatch = 'NotOlderThan';
  }
  return { equals, only: true };
}

/** A watch from `resourceVersion`, with bookmarks and a timeoutSeconds in the configured range. */
export function watchQuery(resourceVersion: string): QueryCheck {
  return {
    equals: { watch: 'true', allowWatchBookmarks: 'true', resourceVersion },
    present: ['timeoutSeconds'],
    only: true,
    check: checkTimeoutSeconds,
  };
}

/** A streaming initial list (sendInitialEvents) not older than `resourceVersion` ('' for a consistent one). */
export function watchListQuery(resourceVersion: string): QueryCheck {
  return {
    equals: {
      watch: 'true',
      allowWatchBookmarks: 'true',
      sendInitialEvents: 'true',
      resourceVersionMatch: 'NotOlderThan',
      resourceVersion,
    },
    present: ['timeoutSeconds'],
    only: true,
    check: checkTimeoutSeconds,
  };
}

function checkTimeoutSeconds(query: URLSearchParams): string | undefined {
  const text = query.get('timeoutSeconds') ?? '';
  const value = Number(text);
  const { min, max } = TIMEOUT_SECONDS;
  if (!/^\d+$/.test(text) || value < min || value >= max) {
    return `expected timeoutSeconds a whole number in [${min}, ${max}), got ${JSON.stringify(text)}`;
  }
  return undefined;
}

export interface Run {
  server: ScriptedServer;
  client: KubeClient;
  watcher: Watcher;
  events: WatcherEvent[];
  /**
   * Resolves once `pred` holds for the events received so far; rejects when the watcher's iteration
   * failed, or with the events and the script's problems when nothing happens for a long while.
   */
  until(pred: (events: readonly WatcherEvent[]) => boolean): Promise<void>;
  /** Resolves once the server has received `count` requests, guarded like `until`. */
  requests(count: number): Promise<void>;
  /**
   * The events as short strings, e.g. `initial:a`, `modified:a@7`, `synced:9:relist`, `error:api:410`;
   * the markers that only announce a list are left out (the requests show the lists).
   */
  types(): string[];
  /** Stop the watcher and wait until its iteration has ended. */
  stop(): Promise<void>;
}

export type RunOptions = Partial<Omit<WatcherOptions, 'transport' | 'path'>> & {
  /** Put something between the watcher and the client, e.g. to observe the chunks it reads. */
  wrap?: (client: KubeClient) => WatchTransport;
};

/**
 * Play `scenario` to a watcher of {@link PODS} on the real client. Defaults: list+watch (no
 * streaming initial list), backoff 20-200 ms, watch timeouts in [60, 120) s.
 */
export async function startRun(t: TestContext, scenario: Scenario, options: RunOptions = {}): Promise<Run> {
  // Torn down last-started first: the watcher, then the client, then the server.
  const cleanups: (() => Promise<void>)[] = [];
  t.after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  const server = await ScriptedServer.start(scenario);
  cleanups.push(() => server.close());
  const dir = await mkdtemp(join(tmpdir(), 'raven-fault-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{ name: scripted, cluster: { server: "' + server.url + '" } }]',
      `contexts: [{ name: fault, context: { cluster: scripted, namespace: ${NAMESPACE} } }]`,
      'current-context: fault',
      '',
    ].join('\n'),
  );
  const client = new KubeClient(await loadConfig({ kubeconfig, env: {} }));
  cleanups.push(() => client.destroy());
  const { wrap, ...watcherOptions } = options;
  const watcher = watch({
    transport: wrap === undefined ? client : wrap(client),
    path: PODS,
    watchList: false,
    backoff: { initialMs: 20, maxMs: 200 },
    timeoutSeconds: TIMEOUT_SECONDS,
    ...watcherOptions,
  });
  const events: WatcherEvent[] = [];
  const changed = new EventTarget();
  // A watcher never ends by itself: an iteration that ends or throws fails whatever waits on it.
  let ended: Error | undefined;
  const consumed = (async () => {
    try {
      for await (const event of watcher) {
        events.push(event);
        changed.dispatchEvent(new Event('change'));
      }
      ended = new Error('the watcher iteration ended');
    } catch (err) {
      ended = new Error('the watcher iteration threw', { cause: err });
    }
    changed.dispatchEvent(new Event('change'));
  })();
  const stop = async (): Promise<void> => {
    watcher.close();
    await consumed;
  };
  cleanups.push(stop);
  const types = (): string[] => events.map(describe).filter((type) => type !== 'listing');
  const until = (pred: (events: readonly WatcherEvent[]) => boolean): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (pred(events)) finish(undefined);
        else if (ended !== undefined) finish(ended);
      };
      const progress = (): number => events.length + server.requests.length;
      let seen = progress();
      const stuck = setInterval(() => {
        if (progress() !== seen) {
          seen = progress();
          return;
        }
        let problems = '';
        try {
          server.assertDone();
        } catch (err) {
          problems = `\n${(err as Error).message}`;
        }
        const last = (items: string[]): string =>
          `${items.length > 20 ? `(last 20 of ${items.length}) ` : ''}${JSON.stringify(items.slice(-20))}`;
        finish(
          new Error(
            `condition not met, and no progress for ${STUCK_MS} ms\nevents: ${last(types())}\nrequests: ${last(requestLog(server))}${problems}`,
          ),
        );
      }, STUCK_MS);
      const finish = (err: Error | undefined): void => {
        clearInterval(stuck);
        changed.removeEventListener('change', check);
        if (err === undefined) resolve();
        else reject(err);
      };
      changed.addEventListener('change', check);
      check();
    });
  const requests = async (count: number): Promise<void> => {
    let arrived = false;
    const waiting = server.waitForRequests(count).then(() => {
      arrived = true;
      changed.dispatchEvent(new Event('change'));
    });
    await until(() => arrived);
    await waiting;
  };
  return { server, client, watcher, events, until, requests, types, stop };
}

/** A short, comparable form of an event. */
export function describe(event: WatcherEvent): string {
  const name = (o: KubeObject): string => o.metadata?.name ?? '';
  switch (event.type) {
    case 'initial':
    case 'added':
      return `${event.type}:${name(event.object)}`;
    case 'modified':
      return `modified:${name(event.object)}@${event.object.metadata?.resourceVersion ?? ''}`;
    case 'deleted':
      return `deleted:${name(event.object)}${event.tombstone ? ':tombstone' : ''}`;
    case 'synced':
      return `synced:${event.resourceVersion}${event.relist ? ':relist' : ''}`;
    case 'bookmark':
      return `bookmark:${event.resourceVersion}`;
    case 'error':
      return `error:${event.status.lastError?.kind ?? 'unknown'}`;
    default:
      // Event types added later (e.g. markers) describe themselves.
      return (event as { type: string }).type;
  }
}

/** The error events, in order. */
export function errors(events: readonly WatcherEvent[]): Extract<WatcherEvent, { type: 'error' }>[] {
  return events.filter((e): e is Extract<WatcherEvent, { type: 'error' }> => e.type === 'error');
}

/** The recorded requests as `list`/`watch`, with the query parameters that tell them apart. */
export function requestLog(server: ScriptedServer): string[] {
  return server.requests.map(({ query }) => {
    const kind =
      query.watch === undefined ? 'list' : query.sendInitialEvents === undefined ? 'watch' : 'watchList';
    const rv = query.resourceVersion === undefined ? '' : ` rv=${query.resourceVersion}`;
    return `${kind}${rv}`;
  });
}

/** Fail with the scenario's problems, then with the events seen, to make a failure readable. */
export function assertPlayed(run: Run): void {
  try {
    run.server.assertDone();
  } catch (err) {
    assert.fail(`${(err as Error).message}\nevents: ${JSON.stringify(run.types())}`);
  }
}
