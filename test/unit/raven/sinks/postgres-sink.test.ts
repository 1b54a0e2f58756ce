/**
 * The PostgreSQL sink against a real PostgreSQL (Debian's package, started on loopback by the
 * harness): the shared sink contract, the schema it creates, idempotent batches, the
 * current-state table, and how failures are classified.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../../src/client/kube-object.js';
import { SinkError } from '../../../../src/errors/raven-error.js';
import { gapNotice } from '../../../../src/raven/model/gap-notice.js';
import { PostgresSink } from '../../../../src/raven/sinks/postgres-sink.js';
import { PostgresServer } from '../../../harness/postgres-server.js';
import { sinkContract, type SinkUnderTest } from './sink-contract.js';
import { sampleEvent } from './fixtures.js';

let server: PostgresServer;
let databases = 0;

before(async () => {
  server = await PostgresServer.start();
  // A role that may connect but not create anything: its writes are refused for good.
  await server.query('CREATE ROLE reader LOGIN');
});
after(async () => {
  await server.stop();
});

/** A fresh database per sink under test, so tests never see each other's rows. */
async function freshDatabase(): Promise<string> {
  const name = `t${++databases}`;
  await server.query(`CREATE DATABASE ${name}`);
  return name;
}

async function postgresSink(kind: 'healthy' | 'down' | 'refused'): Promise<SinkUnderTest> {
  const db = await freshDatabase();
  const url =
    kind === 'down'
      ? 'postgres://raven@127.0.0.1:1/none'
      : kind === 'refused'
        ? `postgres://reader@127.0.0.1:${server.server.port}/${db}`
        : server.url(db);
  if (kind === 'refused') await server.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC', [], db);
  const sink = new PostgresSink({ name: 'archive', connectionString: url, timeoutMs: 5000 });
  return {
    sink,
    received: async () => {
      const exists = await server.query(`SELECT to_regclass('public.raven_changes') AS t`, [], db);
      if (exists[0]?.t === null) return [];
      const rows = await server.query<{ record: unknown }>(
        'SELECT record FROM raven_changes ORDER BY seq',
        [],
        db,
      );
      return rows.map((r) => JSON.stringify(r.record));
    },
    cleanup: () => Promise.resolve(),
  };
}

sinkContract('postgres', {
  healthy: () => postgresSink('healthy'),
  transient: () => postgresSink('down'),
  permanent: () => postgresSink('refused'),
});

describe('postgres sink', () => {
  const signal = new AbortController().signal;

  test('writes each change once however often it is delivered, keyed by uid, resourceVersion and type', async () => {
    const db = await freshDatabase();
    const sink = new PostgresSink({ name: 'archive', connectionString: server.url(db) });
    try {
      const events = Array.from({ length: 50 }, (_, i) => sampleEvent({ name: `obj-${i}` }));
      await Promise.all(events.map((e) => sink.deliver(e, signal)));
      await Promise.all(events.map((e) => sink.deliver(e, signal)));
      // A tombstone carries the object's last resourceVersion: a change of its own, not a repeat.
      await sink.deliver(sampleEvent({ name: 'obj-0', type: 'deleted', tombstone: true }), signal);
      const rows = await server.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM raven_changes WHERE sink = 'archive'`,
        [],
        db,
      );
      assert.equal(rows[0]?.n, 51);
    } finally {
      await sink.close();
    }
  });

  test('concurrent deliveries share one statement per batch', async () => {
    const db = await freshDatabase();
    const sink = new PostgresSink({ name: 'archive', connectionString: server.url(db), poolSize: 1 });
    try {
      await sink.deliver(sampleEvent({ name: 'first' }), signal);
      const events = Array.from({ length: 200 }, (_, i) => sampleEvent({ name: `batch-${i}` }));
      await Promise.all(events.map((e) => sink.deliver(e, signal)));
      const rows = await server.query<{ n: number; txids: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS txids FROM raven_changes WHERE name LIKE 'batch-%'`,
        [],
        db,
      );
      assert.deepEqual(rows, [{ n: 200, txids: 1 }], 'all 200 rows were written by one transaction');
    } finally {
      await sink.close();
    }
  });

  test('keeps the current state of each object in the current-state table and removes deleted ones', async () => {
    const db = await freshDatabase();
    const sink = new PostgresSink({
      name: 'state',
      connectionString: server.url(db),
      currentStateTable: 'raven_objects',
    });
    try {
      const v1 = sampleEvent({ name: 'kept', type: 'added', resourceVersion: '10' });
      const v2 = sampleEvent({
        name: 'kept',
        resourceVersion: '11',
        object: { ...v1.object, spec: { replicas: 5 } } as KubeObject,
      });
      await sink.deliver(v1, signal);
      await sink.deliver(v2, signal);
      // Delivered again after a restart: the older state must not come back.
      await sink.deliver(v1, signal);
      await sink.deliver(sampleEvent({ name: 'gone', type: 'added', resourceVersion: '12' }), signal);
      await sink.deliver(sampleEvent({ name: 'gone', type: 'deleted', resourceVersion: '13' }), signal);
      const rows = await server.query<{ name: string; resource_version: string; replicas: number }>(
        `SELECT name, resource_version, (object->'spec'->>'replicas')::int AS replicas FROM raven_objects ORDER BY name`,
        [],
        db,
      );
      assert.deepEqual(rows, [{ name: 'kept', resource_version: '11', replicas: 5 }]);
    } finally {
      await sink.close();
    }
  });

  test('records gap notices in the log, once each', async () => {
    const db = await freshDatabase();
    const sink = new PostgresSink({ name: 'audit', connectionString: server.url(db) });
    try {
      const notice = gapNotice({
        watcher: 'deploys',
        resource: sampleEvent().resource,
        reason: 'relist',
        fromResourceVersion: '10',
        toResourceVersion: '20',
        since: undefined,
        time: '2024-05-01T12:00:00.000Z',
      });
      await sink.deliver(notice, signal);
      await sink.deliver(notice, signal);
      const rows = await server.query<{ change_type: string; event_id: string }>(
        'SELECT change_type, event_id FROM raven_changes',
        [],
        db,
      );
      assert.deepEqual(rows, [{ change_type: 'gap', event_id: notice.id }]);
    } finally {
      await sink.close();
    }
  });

  test('a role that may create tables in the schema, but not schemas in the database, gets its tables', async () => {
    const db = await freshDatabase();
    await server.query(`CREATE ROLE writer_${db} LOGIN`);
    await server.query(`GRANT USAGE, CREATE ON SCHEMA public TO writer_${db}`, [], db);
    const url = `postgres://writer_${db}@127.0.0.1:${server.server.port}/${db}`;
    const sink = new PostgresSink({ name: 'archive', connectionString: url });
    try {
      await sink.deliver(sampleEvent({ name: 'written' }), signal);
      const rows = await server.query<{ name: string }>('SELECT name FROM raven_changes', [], db);
      assert.deepEqual(rows, [{ name: 'written' }]);
    } finally {
      await sink.close();
    }
  });

  test('names the bad field when a table name is not one Raven can create', () => {
    assert.throws(
      () => new PostgresSink({ name: 'archive', connectionString: server.url(), table: 'Changes; DROP' }),
      /sinks\.archive\.table: "Changes; DROP" is not a table or schema name/,
    );
  });

  test('a server that went away is a retryable failure, and the sink writes again once it is back', async () => {
    const db = await freshDatabase();
    const sink = new PostgresSink({ name: 'archive', connectionString: server.url(db), timeoutMs: 5000 });
    try {
      await sink.deliver(sampleEvent({ name: 'before' }), signal);
      await server.down();
      await assert.rejects(sink.deliver(sampleEvent({ name: 'during' }), signal), (err) => {
        assert.ok(err instanceof SinkError);
        assert.equal(err.retryable, true);
        assert.doesNotMatch(err.message, /raven@/, 'the connection string is not in the message');
        return true;
      });
      await server.up();
      await sink.deliver(sampleEvent({ name: 'during' }), signal);
      const rows = await server.query<{ name: string }>(
        'SELECT name FROM raven_changes ORDER BY seq',
        [],
        db,
      );
      assert.deepEqual(
        rows.map((r) => r.name),
        ['before', 'during'],
      );
    } finally {
      await sink.close();
    }
  });
});
