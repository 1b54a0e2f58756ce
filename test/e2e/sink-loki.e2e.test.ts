/**
 * The Loki sink in the daemon against a real Loki (built from the Go module proxy, on loopback):
 * down for 30 s while objects change, then the daemon restarts; Loki holds every change exactly
 * once, in order per object (`streaming-sink-outage.ts`). The daemon is stopped with SIGTERM: a
 * change replayed after a crash carries a new `time`, so Loki cannot recognise it as one it has
 * (docs/sinks.md, "loki").
 */
import { test } from 'node:test';
import { LokiServer } from '../harness/loki-server.js';
import type { DeliveredEvent } from './daemon-process.js';
import { outageScenario } from './streaming-sink-outage.js';

test('a Loki down for 30 s, then a daemon restart: every change stored once, in order', async (t) => {
  const server = await LokiServer.start();
  t.after(() => server.stop());
  await outageScenario(t, 'logs', {
    sink: `type: loki\n    url: '${server.url}'\n    labels: { test: e2e }\n    timeoutSeconds: 2`,
    down: () => server.down(),
    up: () => server.up(),
    stored: async () =>
      (await server.entries('{test="e2e", watcher="configmaps"}')).map(
        (entry) => JSON.parse(entry.line) as DeliveredEvent,
      ),
    graceful: true,
  });
});
