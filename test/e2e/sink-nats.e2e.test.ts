/**
 * The NATS JetStream sink in the daemon against a real nats-server (Debian's package, on
 * loopback): down for 30 s while objects change, then the daemon crashes and restarts; the stream
 * holds every change exactly once, in order per object (`streaming-sink-outage.ts`).
 */
import { test } from 'node:test';
import { NatsServer } from '../harness/nats-server.js';
import type { DeliveredEvent } from './daemon-process.js';
import { outageScenario } from './streaming-sink-outage.js';

test('a NATS server down for 30 s, then a daemon crash: every change stored once, in order', async (t) => {
  const server = await NatsServer.start();
  t.after(() => server.stop());
  await outageScenario(t, 'bus', {
    sink: `type: nats\n    servers: '${server.url}'\n    subject: 'raven.e2e.{{resource.kind}}.{{namespace}}'\n    timeoutSeconds: 2`,
    down: () => server.down(),
    up: () => server.up(),
    stored: async () => (await server.messages('RAVEN')).map((m) => m.json as DeliveredEvent),
  });
});
