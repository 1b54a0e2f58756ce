/**
 * The PostgreSQL sink in the daemon against a real PostgreSQL (Debian's package, on loopback):
 * down for 30 s while objects change, then the daemon crashes and restarts; the log holds every
 * change exactly once, in order per object (`streaming-sink-outage.ts`).
 */
import { test } from 'node:test';
import { PostgresServer } from '../harness/postgres-server.js';
import type { DeliveredEvent } from './daemon-process.js';
import { outageScenario } from './streaming-sink-outage.js';

test('a PostgreSQL server down for 30 s, then a daemon crash: every change stored once, in order', async (t) => {
  const server = await PostgresServer.start();
  t.after(() => server.stop());
  await server.query('CREATE DATABASE raven');
  await outageScenario(t, 'archive', {
    sink: `type: postgres\n    connectionString: '${server.url('raven')}'\n    currentStateTable: raven_objects`,
    down: () => server.down(),
    up: () => server.up(),
    stored: async () => {
      const exists = await server.query<{ t: string | null }>(
        `SELECT to_regclass('public.raven_changes')::text AS t`,
        [],
        'raven',
      );
      if (exists[0]?.t === null) return [];
      const rows = await server.query<{ record: DeliveredEvent }>(
        `SELECT record FROM raven_changes WHERE sink = 'archive' ORDER BY seq`,
        [],
        'raven',
      );
      return rows.map((r) => r.record);
    },
  });
});
