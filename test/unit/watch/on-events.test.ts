import { test } from 'node:test';
import assert from 'node:assert/strict';
import { onEvents } from '../../../src/watch/on-events.js';
import type { WatcherEvent } from '../../../src/watch/watcher-events.js';

async function* events(list: WatcherEvent[]): AsyncGenerator<WatcherEvent> {
  for (const e of list) {
    await Promise.resolve();
    yield e;
  }
}

const obj = (name: string, rv: string): { metadata: { name: string; resourceVersion: string } } => ({
  metadata: { name, resourceVersion: rv },
});

test('each event type reaches its handler with its fields', async () => {
  const calls: string[] = [];
  await onEvents(
    events([
      { type: 'initial', object: obj('a', '1') },
      { type: 'synced', resourceVersion: '1', relist: false },
      { type: 'modified', object: obj('a', '2'), previous: obj('a', '1') },
      { type: 'deleted', object: obj('a', '2'), tombstone: true },
      { type: 'bookmark', resourceVersion: '5' },
    ]),
    {
      initial: (o) => void calls.push(`initial ${o.metadata?.name ?? ''}`),
      synced: (rv, relist) => void calls.push(`synced ${rv} ${relist}`),
      modified: (o, prev) =>
        void calls.push(
          `modified ${o.metadata?.resourceVersion ?? ''} from ${prev?.metadata?.resourceVersion ?? ''}`,
        ),
      deleted: (o, tombstone) => void calls.push(`deleted ${o.metadata?.name ?? ''} ${tombstone}`),
      bookmark: (rv) => void calls.push(`bookmark ${rv}`),
    },
  );
  assert.deepEqual(calls, [
    'initial a',
    'synced 1 false',
    'modified 2 from 1',
    'deleted a true',
    'bookmark 5',
  ]);
});

test('a throwing or rejecting handler is reported and the next events are still delivered', async () => {
  const seen: string[] = [];
  const failures: string[] = [];
  await onEvents(
    events([
      { type: 'added', object: obj('a', '1') },
      { type: 'added', object: obj('b', '2') },
      { type: 'added', object: obj('c', '3') },
    ]),
    {
      added: async (o) => {
        const name = o.metadata?.name ?? '';
        seen.push(name);
        if (name === 'a') throw new Error('boom a');
        if (name === 'b') await Promise.reject(new Error('boom b'));
      },
      onHandlerError: (err, event) => failures.push(`${(err as Error).message} on ${event.type}`),
    },
  );
  assert.deepEqual(seen, ['a', 'b', 'c']);
  assert.deepEqual(failures, ['boom a on added', 'boom b on added']);
});
