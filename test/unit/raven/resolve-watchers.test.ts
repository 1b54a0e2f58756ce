/**
 * The daemon's discovery step (`resolve-watchers.ts`) on the fake clock, with a scripted
 * discovery: resources resolved per watcher, an unknown name as a config error on its field, an
 * unreachable apiserver asked again with backoff and said once, the events fallback, and a stop
 * while waiting; and `raven check`'s one pass, which names every unknown name and does not wait.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResolvedResource } from '../../../src/client/api-resource.js';
import { UnknownResourceError } from '../../../src/client/unknown-resource-error.js';
import { ConfigError, TransportError } from '../../../src/errors/raven-error.js';
import { parseRavenConfig } from '../../../src/raven/config/load-raven-config.js';
import {
  DISCOVERY_RETRY,
  checkWatcherResources,
  resolveWatchers,
  type ResourceResolver,
} from '../../../src/raven/resolve-watchers.js';
import { FakeClock, flushMicrotasks } from '../../../src/testing/fake-clock.js';
import { captureLogger } from '../openstack/helpers.js';

function resource(group: string, version: string, plural: string, kind: string): ResolvedResource {
  return {
    group,
    version,
    resource: plural,
    singular: kind.toLowerCase(),
    kind,
    namespaced: true,
    verbs: ['list', 'watch'],
    shortNames: [],
    categories: [],
    subresources: [],
    preferred: true,
  };
}

const served: Record<string, ResolvedResource> = {
  deploy: resource('apps', 'v1', 'deployments', 'Deployment'),
  cm: resource('', 'v1', 'configmaps', 'ConfigMap'),
  'v1/events': resource('', 'v1', 'events', 'Event'),
};

/** Discovery that answers from `served`, after `unreachable` transport failures. */
function discovery(unreachable = 0): ResourceResolver & { asked: string[] } {
  const asked: string[] = [];
  let failures = unreachable;
  return {
    asked,
    resolve(input: string) {
      asked.push(input);
      if (failures > 0) {
        failures--;
        return Promise.reject(new TransportError('connect ECONNREFUSED 127.0.0.1:6443'));
      }
      const found = served[input];
      return found === undefined
        ? Promise.reject(
            new UnknownResourceError(input, `the server does not serve a resource named "${input}"`),
          )
        : Promise.resolve(found);
    },
  };
}

/** Options for a run nobody stops, on a clock of its own, logging nowhere a test reads. */
function unhurried(): { clock: FakeClock; logger: ReturnType<typeof captureLogger>; signal: AbortSignal } {
  return { clock: new FakeClock(), logger: captureLogger(), signal: new AbortController().signal };
}

const config = parseRavenConfig(`watchers:
  - { name: deploys, resource: deploy }
  - { name: maps, resource: cm }
sinks:
  - { name: out, type: stdout }
`);

test('resolves every watcher’s resource by its name', async () => {
  const d = discovery();
  const resolved = await resolveWatchers(config.watchers, d, {
    ...unhurried(),
  });
  assert.deepEqual(d.asked, ['deploy', 'cm']);
  assert.ok(resolved !== undefined);
  assert.equal(resolved.get('deploys')?.resource, 'deployments');
  assert.equal(resolved.get('maps')?.resource, 'configmaps');
});

test('a resource the server does not serve is a config error on that watcher’s field', async () => {
  const bad = parseRavenConfig(`watchers:
  - { name: deploys, resource: deploy }
  - { name: typo, resource: deploymentz }
sinks:
  - { name: out, type: stdout }
`);
  await assert.rejects(
    resolveWatchers(bad.watchers, discovery(), {
      ...unhurried(),
      configFile: 'raven.yaml',
    }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /raven\.yaml: watchers\[1\]\.resource: .*"deploymentz"/);
      assert.ok(error.cause instanceof UnknownResourceError);
      return true;
    },
  );
});

test('an unreachable apiserver is asked again with backoff, and said once', async () => {
  const clock = new FakeClock();
  const logger = captureLogger();
  const d = discovery(3);
  const done = resolveWatchers(config.watchers, d, {
    clock,
    logger,
    signal: new AbortController().signal,
    random: () => 0.5, // no jitter: each wait is the policy's own
  });
  await flushMicrotasks();
  assert.deepEqual(d.asked, ['deploy']);
  // The policy's waits, without jitter: 0.5 s, then 1 s, then 2 s; nothing is asked before each is over.
  assert.equal(DISCOVERY_RETRY.initialMs, 500);
  assert.equal(DISCOVERY_RETRY.factor, 2);
  for (const wait of [500, 1000, 2000]) {
    const before: number = d.asked.length;
    await clock.tick(wait - 1);
    assert.equal(d.asked.length, before, `not asked again before ${wait} ms`);
    await clock.tick(1);
    assert.ok(d.asked.length > before, `asked again after ${wait} ms`);
  }
  // The fourth attempt answered, and the next watcher was asked straight away.
  assert.deepEqual(d.asked, ['deploy', 'deploy', 'deploy', 'deploy', 'cm']);
  const resolved = await done;
  assert.equal(resolved?.size, 2);
  const warnings = logger.records.filter(
    (r) => r.msg === 'cannot reach the apiserver for discovery; retrying',
  );
  assert.equal(warnings.length, 1, 'three failures, one warning');
  assert.equal((warnings[0]?.obj as Record<string, unknown>).watcher, 'deploys');
  const answered = logger.records.find((r) => r.msg === 'discovery answered');
  assert.equal((answered?.obj as Record<string, unknown>).attempts, 4);
  assert.equal(clock.pending, 0, 'no timer left');
});

test('an events watcher falls back to core v1 Events where events.k8s.io is not served', async () => {
  const events = parseRavenConfig(`watchers:
  - { name: events, type: events }
sinks:
  - { name: out, type: stdout }
`);
  const logger = captureLogger();
  const d = discovery();
  const resolved = await resolveWatchers(events.watchers, d, {
    ...unhurried(),
    logger,
  });
  assert.deepEqual(d.asked, ['events.k8s.io/v1/events', 'v1/events']);
  assert.equal(resolved?.get('events')?.group, '');
  assert.ok(logger.records.some((r) => r.msg === 'events.k8s.io/v1 is not served; reading core v1 Events'));
});

test('an events watcher that names its API does not fall back', async () => {
  const events = parseRavenConfig(`watchers:
  - { name: events, type: events, api: events.k8s.io/v1 }
sinks:
  - { name: out, type: stdout }
`);
  await assert.rejects(
    resolveWatchers(events.watchers, discovery(), {
      ...unhurried(),
    }),
    ConfigError,
  );
});

test('a stop while waiting for the apiserver resolves nothing and leaves no timer', async () => {
  const clock = new FakeClock();
  const stop = new AbortController();
  const done = resolveWatchers(config.watchers, discovery(100), {
    clock,
    logger: captureLogger(),
    signal: stop.signal,
  });
  await flushMicrotasks();
  assert.equal(clock.pending, 1, 'waiting to ask again');
  stop.abort();
  assert.equal(await done, undefined);
  assert.equal(clock.pending, 0);
});

test('checking names every resource the server does not serve, each on its own field', async () => {
  const bad = parseRavenConfig(`watchers:
  - { name: typo, resource: deploymentz }
  - { name: deploys, resource: deploy }
  - { name: other, resource: cmz }
sinks:
  - { name: out, type: stdout }
`);
  const d = discovery();
  const problems = await checkWatcherResources(bad.watchers, d, {
    logger: captureLogger(),
    signal: new AbortController().signal,
    configFile: 'raven.yaml',
  });
  assert.deepEqual(d.asked, ['deploymentz', 'deploy', 'cmz']);
  assert.deepEqual(
    problems.map((p) => p.message),
    [
      'raven.yaml: watchers[0].resource: the server does not serve a resource named "deploymentz"',
      'raven.yaml: watchers[2].resource: the server does not serve a resource named "cmz"',
    ],
  );
});

test('checking does not wait for an unreachable apiserver: it rejects with the failure at once', async () => {
  const d = discovery(1);
  await assert.rejects(
    checkWatcherResources(config.watchers, d, {
      logger: captureLogger(),
      signal: new AbortController().signal,
    }),
    TransportError,
  );
  assert.deepEqual(d.asked, ['deploy'], 'asked once');
});
