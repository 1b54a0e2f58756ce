import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import type { KubeObject } from '../../../src/watch/decode/watch-event.js';
import { watch, type WatcherOptions } from '../../../src/watch/watcher.js';
import type { WatcherEvent } from '../../../src/watch/watcher-events.js';
import { FakeTransport, ev, pod, status, type Step } from './fake-transport.js';

/** Run a watcher over `script` until `count` events (listing markers aside) have arrived. */
async function collect(
  script: Step[],
  count: number,
  options: Partial<WatcherOptions> = {},
): Promise<WatcherEvent[]> {
  const clock = new FakeClock();
  const watcher = watch({
    transport: new FakeTransport(script, clock),
    path: '/api/v1/namespaces/ns/pods',
    clock,
    random: () => 0.5,
    watchList: false,
    ...options,
  });
  const events: WatcherEvent[] = [];
  const done = (async () => {
    for await (const e of watcher) if (e.type !== 'listing') events.push(e);
  })();
  for (let waited = 0; events.length < count; waited += 100) {
    if (waited > 600_000)
      assert.fail(`only ${events.length} events: ${events.map((e) => e.type).join(', ')}`);
    await clock.tick(100);
  }
  watcher.close();
  await clock.tick(1);
  await done;
  return events;
}

function withManagedFields(name: string, rv: string): object {
  const object = pod(name, rv) as { metadata: Record<string, unknown> };
  object.metadata.managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': {} } }];
  return object;
}

function eventOf<K extends WatcherEvent['type']>(
  events: WatcherEvent[],
  type: K,
): Extract<WatcherEvent, { type: K }> {
  const found = events.find((e) => e.type === type);
  assert.ok(found !== undefined, `no ${type} event`);
  return found as Extract<WatcherEvent, { type: K }>;
}

test('modified carries the previous state decoded from the kept copy: equal to what was delivered, a copy of its own', async () => {
  const events = await collect(
    [
      { list: { items: [pod('a', '10')], resourceVersion: '10' } },
      { events: [ev('MODIFIED', pod('a', '11', { status: { phase: 'Running' } }))], then: 'hang' },
    ],
    3,
  );
  const initial = eventOf(events, 'initial').object;
  const modified = eventOf(events, 'modified');
  assert.deepEqual(modified.previous, pod('a', '10'));
  assert.notEqual(modified.previous, initial, 'a fresh copy, not the object handed out before');
  assert.equal(modified.previous, modified.previous, 'decoded once, then the same object');
});

test("listed items the server wrote without a type are delivered, kept and tombstoned with the list's, as the watch's objects are", async () => {
  const bare = (name: string, rv: string): object => {
    const { kind: _kind, apiVersion: _apiVersion, ...rest } = pod(name, rv) as Record<string, unknown>;
    return rest;
  };
  for (const options of [{}, { dropManagedFields: true }]) {
    const events = await collect(
      [
        { list: { items: [bare('a', '10'), bare('b', '10')], resourceVersion: '10' } },
        { status: 410 },
        { list: { items: [bare('a', '12')], resourceVersion: '12' } },
        { events: [ev('MODIFIED', pod('a', '13'))], then: 'hang' },
      ],
      8,
      options,
    );
    const initial = events.filter((e) => e.type === 'initial').map((e) => e.object);
    assert.deepEqual(initial, [pod('a', '10'), pod('b', '10')]);
    assert.deepEqual(Object.keys(initial[0] ?? {}).slice(0, 2), ['kind', 'apiVersion']);
    const modified = events.filter((e) => e.type === 'modified');
    assert.deepEqual(
      modified.map((e) => [e.object, e.previous]),
      [
        [pod('a', '12'), pod('a', '10')],
        [pod('a', '13'), pod('a', '12')],
      ],
    );
    assert.deepEqual(eventOf(events, 'deleted').object, pod('b', '10'));
  }
});

test('a consumer that changes a delivered object does not change the previous state of the next change', async () => {
  const clock = new FakeClock();
  const watcher = watch({
    transport: new FakeTransport(
      [
        { list: { items: [], resourceVersion: '1' } },
        { events: [ev('ADDED', pod('a', '2')), ev('MODIFIED', pod('a', '3'))], then: 'hang' },
      ],
      clock,
    ),
    path: '/api/v1/namespaces/ns/pods',
    clock,
    watchList: false,
  });
  let previous: KubeObject | undefined;
  const done = (async () => {
    for await (const e of watcher) {
      if (e.type === 'added')
        (e.object.metadata as { labels: Record<string, string> }).labels.app = 'changed';
      if (e.type === 'modified') previous = e.previous;
    }
  })();
  for (let i = 0; i < 100 && previous === undefined; i++) await clock.tick(100);
  watcher.close();
  await clock.tick(1);
  await done;
  assert.equal(previous?.metadata?.labels?.app, 'web', 'the state the server sent');
});

test('with dropManagedFields, neither the object nor its previous state carries managedFields', async () => {
  const events = await collect(
    [
      { list: { items: [withManagedFields('a', '10')], resourceVersion: '10' } },
      { events: [ev('MODIFIED', withManagedFields('a', '11'))], then: 'hang' },
    ],
    3,
    { dropManagedFields: true },
  );
  const modified = eventOf(events, 'modified');
  assert.equal(modified.object.metadata?.managedFields, undefined);
  assert.equal(modified.previous?.metadata?.managedFields, undefined);
  assert.deepEqual(modified.previous, pod('a', '10'));
});

test('a tombstone carries the last state decoded from the kept copy, whole', async () => {
  const events = await collect(
    [
      { list: { items: [pod('a', '10')], resourceVersion: '10' } },
      { events: [ev('MODIFIED', pod('b', '11', { status: { phase: 'Running' } }))], then: 'end' },
      { status: 410, body: status(410, 'Expired') },
      { list: { items: [pod('a', '10')], resourceVersion: '20' } },
    ],
    5,
  );
  const tombstone = eventOf(events, 'deleted');
  assert.equal(tombstone.tombstone, true);
  assert.deepEqual(tombstone.object, pod('b', '11', { status: { phase: 'Running' } }));
});

test('with keepObjects false, previous is undefined and a tombstone is a stub of what is known', async () => {
  const events = await collect(
    [
      { list: { items: [pod('a', '10'), pod('b', '10')], resourceVersion: '10' } },
      { events: [ev('MODIFIED', pod('a', '11'))], then: 'end' },
      { status: 410, body: status(410, 'Expired') },
      { list: { items: [pod('a', '11')], resourceVersion: '20' } },
    ],
    6,
    { keepObjects: false },
  );
  assert.equal(eventOf(events, 'modified').previous, undefined);
  assert.deepEqual(eventOf(events, 'deleted').object, {
    metadata: { namespace: 'ns', name: 'b', resourceVersion: '10', uid: 'uid-b' },
  });
});

test('an object handed to resume is the previous state of its first change', async () => {
  const events = await collect([{ events: [ev('MODIFIED', pod('a', '6'))], then: 'hang' }], 1, {
    resume: { resourceVersion: '5', objects: [pod('a', '5')] },
  });
  assert.deepEqual(eventOf(events, 'modified').previous, pod('a', '5'));
});
