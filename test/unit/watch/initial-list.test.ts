import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseServerVersion } from '../../../src/client/kube-client.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { watch, type WatcherOptions } from '../../../src/watch/watcher.js';
import { FakeTransport, pod } from './fake-transport.js';

type Version = { major: number; minor: number } | undefined | 'throws';

/** A scripted transport that also tells the server's version, as KubeClient does. */
class VersionedTransport extends FakeTransport {
  asked = 0;
  readonly #version: Version;

  constructor(version: Version) {
    super([{ list: { items: [pod('a', '10')], resourceVersion: '20' } }]);
    this.#version = version;
  }

  serverVersion(): Promise<{ major: number; minor: number } | undefined> {
    this.asked++;
    if (this.#version === 'throws') return Promise.reject(new Error('connect ECONNREFUSED'));
    return Promise.resolve(this.#version);
  }
}

/** The query of the watcher's first request, and whether it asked the version. */
async function firstRequest(
  version: Version,
  options: Partial<Pick<WatcherOptions, 'watchList' | 'pageSize'>> = {},
): Promise<{ query: Record<string, string>; asked: number; watchList: boolean }> {
  const clock = new FakeClock();
  const transport = new VersionedTransport(version);
  const watcher = watch({
    transport,
    path: '/api/v1/namespaces/ns/pods',
    clock,
    random: () => 0.5,
    ...options,
  });
  const done = (async () => {
    for await (const _ of watcher);
  })();
  // The version is asked before the first request: a few virtual ticks let the probe settle.
  for (let i = 0; i < 100 && transport.requests.length === 0; i++) await clock.tick(1);
  const sent = transport.requests[0];
  assert.ok(sent !== undefined, 'the watcher sent its first request');
  const result = {
    query: sent.query,
    asked: transport.asked,
    watchList: watcher.status().watchList,
  };
  watcher.close();
  await clock.tick(1);
  await done;
  return result;
}

test('a server of 1.33 or later is listed in one page by default, not streamed', async () => {
  for (const version of [
    { major: 1, minor: 33 },
    { major: 1, minor: 36 },
    { major: 2, minor: 0 },
  ]) {
    const first = await firstRequest(version);
    assert.deepEqual(first.query, {}, `${version.major}.${version.minor}: one list, no limit`);
    assert.equal(first.watchList, false);
  }
});

test('an older server, or a transport that cannot tell, gets the streaming initial list by default', async () => {
  for (const version of [{ major: 1, minor: 32 }, { major: 0, minor: 99 }, undefined, 'throws'] as const) {
    const first = await firstRequest(version);
    assert.equal(first.query.sendInitialEvents, 'true', JSON.stringify(version));
    assert.equal(first.watchList, true);
  }
});

test('watchList and pageSize given are kept whatever the version, and watchList given asks nothing', async () => {
  const streamed = await firstRequest({ major: 1, minor: 36 }, { watchList: true });
  assert.equal(streamed.query.sendInitialEvents, 'true');
  assert.equal(streamed.asked, 0);
  const paged = await firstRequest({ major: 1, minor: 36 }, { watchList: false });
  assert.deepEqual(paged.query, { limit: '500' }, 'watchList: false keeps the paged list');
  assert.equal(paged.asked, 0);
  const sized = await firstRequest({ major: 1, minor: 36 }, { pageSize: 2 });
  assert.deepEqual(sized.query, { limit: '2' });
});

test('/version is read as numbers, with a managed server suffix, or from gitVersion', () => {
  assert.deepEqual(parseServerVersion('{"major":"1","minor":"36","gitVersion":"v1.36.3"}'), {
    major: 1,
    minor: 36,
    gitVersion: 'v1.36.3',
  });
  assert.equal(parseServerVersion('{"major":"1","minor":"33+","gitVersion":"v1.33.2-eks-1"}')?.minor, 33);
  assert.deepEqual(parseServerVersion('{"major":"","minor":"","gitVersion":"v1.31.0-gke.1"}'), {
    major: 1,
    minor: 31,
    gitVersion: 'v1.31.0-gke.1',
  });
  assert.equal(parseServerVersion('{"kind":"Status"}'), undefined);
  assert.equal(parseServerVersion('not json'), undefined);
  assert.equal(parseServerVersion('null'), undefined);
});
