/**
 * The daemon as one piece (`daemon.ts`), over a scripted cluster (the in-memory watch transport,
 * a discovery table and a Lease store; no socket) and the fake clock. Single replica: a change flows
 * from the watch to a stdout sink and to a custom handler, the SQLite checkpoint records what the
 * sink confirmed and the watch's resourceVersion, and a stop drains and ends the run cleanly; a
 * handler's `context.cache()` reads the watcher, or says in a RavenError why it cannot. Leader
 * election: a standby neither watches nor delivers, takes the Lease once it expired, then works,
 * and releases the Lease when stopped.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { anonymousAuth } from '../../../src/client/auth/auth-provider.js';
import {
  KubeClient,
  type RequestOptions,
  type StreamOptions,
  type StreamResponse,
} from '../../../src/client/kube-client.js';
import { ApiError } from '../../../src/errors/api-error.js';
import { SqliteCheckpointStore } from '../../../src/raven/checkpoint/sqlite-checkpoint-store.js';
import { parseRavenConfig } from '../../../src/raven/config/load-raven-config.js';
import { Daemon } from '../../../src/raven/daemon.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { captureLogger } from '../openstack/helpers.js';
import { FakeTransport, bookmark, ev, pod, type Step } from '../watch/fake-transport.js';

/** The core API's discovery, serving pods only. */
const discovery: Record<string, unknown> = {
  '/api': { kind: 'APIVersions', versions: ['v1'] },
  '/apis': { kind: 'APIGroupList', groups: [] },
  '/api/v1': {
    kind: 'APIResourceList',
    groupVersion: 'v1',
    resources: [
      { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['list', 'watch'] },
    ],
  },
};

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/';

/** A client whose requests are answered from `discovery` and whose watches follow a script. */
class ScriptedCluster extends KubeClient {
  readonly transport: FakeTransport;

  constructor(script: Step[], clock: FakeClock) {
    super({
      server: 'https://cluster.test',
      namespace: 'default',
      tls: { insecureSkipTlsVerify: false },
      auth: anonymousAuth,
      source: { kind: 'in-cluster', directory: '/var/run/secrets', host: 'cluster.test', port: '443' },
    });
    this.transport = new FakeTransport(script, clock);
  }

  /** The Leases, by path: read and written as an apiserver would, with a resourceVersion each. */
  readonly leases = new Map<
    string,
    { metadata: { resourceVersion: string }; spec?: Record<string, unknown> }
  >();

  override request<T>(opts: RequestOptions): Promise<T> {
    if (opts.path.startsWith(LEASES)) return Promise.resolve(this.#lease(opts) as T);
    const answer = discovery[opts.path];
    if (answer === undefined)
      return Promise.reject(
        new ApiError(404, { code: 404, reason: 'NotFound' }, { method: 'GET', path: opts.path }),
      );
    return Promise.resolve(answer as T);
  }

  #lease(opts: RequestOptions): unknown {
    const method = opts.method;
    const body = opts.body as { metadata?: { name?: string }; spec?: Record<string, unknown> } | undefined;
    const path = method === 'POST' ? `${opts.path}/${body?.metadata?.name ?? ''}` : opts.path;
    const stored = this.leases.get(path);
    if (method === 'GET') {
      if (stored === undefined)
        throw new ApiError(404, { code: 404, reason: 'NotFound' }, { method, path: opts.path });
      return stored;
    }
    const written = {
      ...body,
      metadata: {
        ...body?.metadata,
        resourceVersion: String(Number(stored?.metadata.resourceVersion ?? 0) + 1),
      },
    };
    this.leases.set(path, written);
    return written;
  }

  override async stream(opts: StreamOptions): Promise<StreamResponse> {
    const { statusCode, body } = await this.transport.stream({
      path: opts.path,
      ...(opts.query === undefined ? {} : { query: opts.query }),
      ...(opts.signal === undefined ? {} : { signal: opts.signal }),
    });
    return { statusCode, headers: {}, body };
  }
}

/** What the handler module below saw, shared through the process (the daemon imports the module). */
interface Seen {
  started: string[];
  handled: string[];
}
const SEEN = Symbol.for('raven.daemon-test.seen');
const seen = (): Seen => (globalThis as Record<symbol, Seen>)[SEEN] as Seen;

const HANDLER = `
const seen = globalThis[Symbol.for('raven.daemon-test.seen')];
const attempt = (ctx, watcher) => {
  try {
    return 'objects ' + ctx.cache(watcher).list().length;
  } catch (err) {
    return err.code + ': ' + err.message;
  }
};
export default {
  start(ctx) {
    seen.started.push(attempt(ctx, 'pods'), attempt(ctx, 'nodes'));
  },
  handle(event, ctx) {
    const cached = ctx.cache('pods').get(event.namespace, event.name);
    seen.handled.push(event.type + ' ' + event.name + '@' + event.resourceVersion + ', cached at ' + cached?.metadata?.resourceVersion);
  },
};
`;

/** `extra`: more of the config file, after the rest. */
function setup(script: Step[], extra = '') {
  const dir = mkdtempSync(join(tmpdir(), 'raven-daemon-'));
  writeFileSync(join(dir, 'handler.mjs'), HANDLER);
  (globalThis as Record<symbol, Seen>)[SEEN] = { started: [], handled: [] };
  const config = parseRavenConfig(
    `
checkpoint: { type: sqlite, path: ./state.db }
server: { enabled: false }
watchers:
  - { name: pods, resource: pods, namespaces: [ns] }
sinks:
  - { name: out, type: stdout, format: json }
handlers:
  - { name: seen, module: ./handler.mjs, watchers: [pods] }
${extra}`,
    { file: join(dir, 'raven.yaml'), baseDir: dir, homeDir: dir, env: {}, defaultIdentity: 'me' },
  );
  const clock = new FakeClock();
  const logger = captureLogger();
  const stdout = new PassThrough();
  const lines: string[] = [];
  stdout.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  const client = new ScriptedCluster(script, clock);
  const daemon = new Daemon({ config, logger, clock, client, stdout, random: () => 0 });
  const abort = new AbortController();
  const outcome: { ended: boolean; error?: unknown } = { ended: false };
  const done = daemon.run(abort.signal).then(
    () => {
      outcome.ended = true;
    },
    (error: unknown) => {
      outcome.ended = true;
      outcome.error = error;
    },
  );
  /** Move virtual time on, 100 ms at a time, until `condition` holds (at most 10 virtual minutes). */
  const until = async (what: string, condition: () => boolean): Promise<void> => {
    for (let i = 0; i < 6000 && !condition(); i++) await clock.tick(100);
    assert.ok(
      condition(),
      `still waiting for ${what}; log: ${JSON.stringify(logger.records.map((r) => r.msg))}`,
    );
  };
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  return { dir, clock, logger, lines, client, daemon, abort, outcome, done, until, cleanup };
}

/** A streaming list (one object, then the end bookmark), then a change and a bookmark. */
const A_CHANGE: Step[] = [
  {
    events: [
      ev('ADDED', pod('a', '10')),
      bookmark('10', { 'k8s.io/initial-events-end': 'true' }),
      ev('MODIFIED', pod('a', '11', { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } })),
      bookmark('12'),
    ],
    then: 'hang',
  },
];

test('single replica: a change reaches the sink and the handler, the checkpoint records it, a stop drains', async (t) => {
  const run = setup(A_CHANGE);
  t.after(run.cleanup);
  await run.until('the change on stdout', () => run.lines.length > 0);
  const record = JSON.parse(run.lines[0] ?? '{}') as Record<string, unknown>;
  assert.equal(record.type, 'modified');
  assert.equal(record.name, 'a');
  assert.equal(record.resourceVersion, '11');
  assert.equal(run.lines.length, 1, 'the listed state is a baseline (initial: none), not a change');
  await run.until('the handler', () => seen().handled.length > 0);
  assert.deepEqual(seen().handled, ['modified a@11, cached at 11']);
  assert.deepEqual(seen().started, [
    'ERR_INVALID_STATE: handler seen: context.cache("pods"): the watcher is not watching now (handlers start before the watchers, and stop after them); read the cache while handling a change',
    'ERR_INVALID_ARGUMENT: handler seen: context.cache("nodes"): no watcher has that name; the configured watchers are pods',
  ]);
  assert.deepEqual(run.daemon.readiness(), { ready: true, details: {} });
  assert.equal(run.client.transport.requests.length, 1, 'one request: the list streamed, then watched');
  assert.equal(run.client.transport.requests[0]?.query.sendInitialEvents, 'true');

  run.abort.abort(new Error('test over'));
  await run.until('the run to end', () => run.outcome.ended);
  await run.done;
  assert.equal(run.outcome.error, undefined, 'a stop ends the run without an error');
  const messages = run.logger.records.map((r) => r.msg);
  assert.ok(messages.includes('draining: delivering what is queued'));
  assert.ok(messages.includes('drained'));
  assert.ok(!run.logger.records.some((r) => r.level === 'error'), JSON.stringify(run.logger.records));

  // What the daemon wrote, read back as the next start would.
  const store = SqliteCheckpointStore.open(join(run.dir, 'state.db'), { clock: new FakeClock() });
  try {
    assert.equal(store.confirmedVersion('pods')?.resourceVersion, '12', 'the bookmark after the change');
    const entries = [...store.entries('pods', 'out')];
    assert.deepEqual(
      entries.map((e) => `${e.key}@${e.resourceVersion}`),
      ['ns/a@11'],
      'what the sink confirmed',
    );
  } finally {
    await store.close();
  }
});

test('a stop before the watchers synced still drains and ends cleanly', async (t) => {
  // The streaming list says nothing: the daemon is stopped while its only watcher is listing.
  const run = setup([{ events: [], then: 'hang' }]);
  t.after(run.cleanup);
  await run.until('the list to be asked for', () => run.client.transport.requests.length > 0);
  assert.equal(run.daemon.readiness().ready, false);
  run.abort.abort(new Error('test over'));
  await run.until('the run to end', () => run.outcome.ended);
  await run.done;
  assert.equal(run.outcome.error, undefined);
  assert.deepEqual(run.lines, []);
  assert.ok(run.logger.records.some((r) => r.msg === 'drained'));
});

test('leader-elected: a standby while another replica holds the Lease, then the leader once it expired; a stop releases it', async (t) => {
  const run = setup(
    A_CHANGE,
    'leaderElection: { enabled: true, namespace: raven, name: raven, identity: me }\n',
  );
  t.after(run.cleanup);
  const path = `${LEASES}raven/leases/raven`;
  const other = { holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: new Date(0).toISOString() };
  run.client.leases.set(path, { metadata: { resourceVersion: '1' }, spec: other });
  await run.until('the Lease to be read', () => run.logger.records.some((r) => r.msg === 'leader'));
  assert.deepEqual(run.daemon.readiness(), {
    ready: true,
    details: { leaderElection: 'standby: another replica leads' },
  });
  assert.equal(run.client.transport.requests.length, 0, 'a standby does not watch');
  assert.equal(run.lines.length, 0, 'nor delivers');

  // The other replica renews no more: once its Lease has run out, this one takes it and works.
  await run.until('the change on stdout', () => run.lines.length > 0);
  assert.equal(run.client.leases.get(path)?.spec?.holderIdentity, 'me');
  assert.equal((JSON.parse(run.lines[0] ?? '{}') as { resourceVersion?: string }).resourceVersion, '11');
  assert.deepEqual(run.daemon.readiness(), { ready: true, details: {} });

  run.abort.abort(new Error('test over'));
  await run.until('the run to end', () => run.outcome.ended);
  await run.done;
  assert.equal(run.outcome.error, undefined);
  assert.ok(run.logger.records.some((r) => r.msg === 'drained'));
  assert.equal(
    run.client.leases.get(path)?.spec?.holderIdentity,
    '',
    'the Lease is released for the next leader',
  );
});
