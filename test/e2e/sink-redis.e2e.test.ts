/**
 * The Redis Streams sink in the daemon against a real redis-server (Debian's package, on
 * loopback): down for 30 s while objects change, then the daemon crashes and restarts; the stream
 * holds every change exactly once, in order per object (`streaming-sink-outage.ts`).
 */
import { test } from 'node:test';
import { RedisServer } from '../harness/redis-server.js';
import type { DeliveredEvent } from './daemon-process.js';
import { outageScenario } from './streaming-sink-outage.js';

test('a Redis server down for 30 s, then a daemon crash: every change stored once, in order', async (t) => {
  const server = await RedisServer.start();
  t.after(() => server.stop());
  await outageScenario(t, 'stream', {
    sink: `type: redis\n    url: '${server.url()}'\n    stream: 'raven:e2e'\n    timeoutSeconds: 2`,
    down: () => server.down(),
    up: () => server.up(),
    stored: async () =>
      (await server.entries('raven:e2e')).map((fields) => JSON.parse(fields.event ?? '{}') as DeliveredEvent),
  });
});
