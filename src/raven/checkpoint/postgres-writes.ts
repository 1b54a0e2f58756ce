/**
 * Writing a buffer of checkpoint writes (`pending-writes.ts`) to the PostgreSQL tables, inside the
 * caller's transaction. A handful of statements whatever the buffer's size: rows travel as arrays
 * (`unnest`), so a flush of 10,000 deliveries is as many round trips as a flush of one.
 *
 * Order, as in the SQLite store: replaced pairs are emptied first, then entries and tombstones
 * are written, then confirmed resourceVersions (a stored one never runs ahead of the entries it
 * confirms) with the tombstones they reach dropped, then states no sink refers to are deleted.
 */
import type pg from 'pg';
import { toObjectKey } from '../../client/object-key.js';
import { tombstoneExpired } from './checkpoint-store.js';
import type { PendingWrites } from './pending-writes.js';

interface Columns {
  watcher: string[];
  sink: string[];
  key: string[];
  uid: string[];
  rv: string[];
  object: string[];
}

const columns = (): Columns => ({ watcher: [], sink: [], key: [], uid: [], rv: [], object: [] });

/** Write `batch` with `client` (in a transaction the caller opened); `s` is the quoted schema. */
export async function writePending(client: pg.ClientBase, s: string, batch: PendingWrites): Promise<void> {
  const replaced = { watcher: [] as string[], sink: [] as string[] };
  const marked = { watcher: [] as string[], sink: [] as string[] };
  const puts = columns();
  const deletes = columns();
  for (const pair of batch.pairs.values()) {
    marked.watcher.push(pair.watcher);
    marked.sink.push(pair.sink);
    if (pair.replace) {
      replaced.watcher.push(pair.watcher);
      replaced.sink.push(pair.sink);
    }
    for (const [key, write] of pair.writes) {
      const into = 'deleted' in write ? deletes : puts;
      const what = 'deleted' in write ? write.deleted : write.entry;
      into.watcher.push(pair.watcher);
      into.sink.push(pair.sink);
      into.key.push(key);
      into.uid.push(what.uid ?? '');
      into.rv.push(what.resourceVersion ?? '');
      if ('entry' in write) into.object.push(JSON.stringify(write.entry.object));
    }
  }
  const pairsOf = 'unnest($1::text[], $2::text[]) AS p(watcher, sink)';
  if (replaced.watcher.length > 0) {
    for (const table of ['delivered', 'tombstones']) {
      await client.query(
        `DELETE FROM ${s}.${table} t USING ${pairsOf} WHERE t.watcher = p.watcher AND t.sink = p.sink`,
        [replaced.watcher, replaced.sink],
      );
    }
  }
  if (marked.watcher.length > 0) {
    await client.query(
      `INSERT INTO ${s}.checkpoints (watcher, sink) SELECT * FROM ${pairsOf} ON CONFLICT DO NOTHING`,
      [marked.watcher, marked.sink],
    );
  }
  if (puts.key.length > 0) await writeEntries(client, s, puts);
  if (deletes.key.length > 0) await writeTombstones(client, s, deletes);
  if (batch.forgotten.size > 0) {
    await client.query(`DELETE FROM ${s}.watchers WHERE watcher = ANY($1::text[])`, [[...batch.forgotten]]);
  }
  if (batch.versions.size > 0) await writeVersions(client, s, batch);
  await client.query(
    `DELETE FROM ${s}.states st WHERE st.watcher = ANY($1::text[])
        AND NOT EXISTS (SELECT 1 FROM ${s}.delivered d WHERE d.state = st.id)`,
    [batch.watchers()],
  );
}

async function writeEntries(client: pg.ClientBase, s: string, puts: Columns): Promise<void> {
  await client.query(
    `INSERT INTO ${s}.states (watcher, key, uid, resource_version, object)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
     ON CONFLICT DO NOTHING`,
    [puts.watcher, puts.key, puts.uid, puts.rv, puts.object],
  );
  const rows =
    'unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(watcher, sink, key, uid, rv)';
  const params = [puts.watcher, puts.sink, puts.key, puts.uid, puts.rv];
  await client.query(
    `INSERT INTO ${s}.delivered (watcher, sink, key, state)
     SELECT u.watcher, u.sink, u.key, st.id FROM ${rows}
       JOIN ${s}.states st
         ON st.watcher = u.watcher AND st.key = u.key AND st.uid = u.uid AND st.resource_version = u.rv
     ON CONFLICT (watcher, sink, key) DO UPDATE SET state = EXCLUDED.state`,
    params,
  );
  await client.query(
    `DELETE FROM ${s}.tombstones t USING ${rows}
      WHERE t.watcher = u.watcher AND t.sink = u.sink AND t.key = u.key`,
    params,
  );
}

async function writeTombstones(client: pg.ClientBase, s: string, deletes: Columns): Promise<void> {
  const params = [deletes.watcher, deletes.sink, deletes.key, deletes.uid, deletes.rv];
  await client.query(
    `DELETE FROM ${s}.delivered d
      USING unnest($1::text[], $2::text[], $3::text[]) AS u(watcher, sink, key)
      WHERE d.watcher = u.watcher AND d.sink = u.sink AND d.key = u.key`,
    params.slice(0, 3),
  );
  await client.query(
    `INSERT INTO ${s}.tombstones (watcher, sink, key, uid, resource_version)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
     ON CONFLICT (watcher, sink, key) DO UPDATE SET uid = EXCLUDED.uid, resource_version = EXCLUDED.resource_version`,
    params,
  );
}

async function writeVersions(client: pg.ClientBase, s: string, batch: PendingWrites): Promise<void> {
  const watchers = [...batch.versions.keys()];
  const confirmed = [...batch.versions.values()];
  await client.query(
    `INSERT INTO ${s}.watchers (watcher, resource_version, scope, sinks, confirmed_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])
     ON CONFLICT (watcher) DO UPDATE SET resource_version = EXCLUDED.resource_version,
       scope = EXCLUDED.scope, sinks = EXCLUDED.sinks, confirmed_at = EXCLUDED.confirmed_at`,
    [
      watchers,
      confirmed.map((c) => c.resourceVersion),
      confirmed.map((c) => c.scope),
      confirmed.map((c) => JSON.stringify(c.sinks)),
      confirmed.map((c) => c.at),
    ],
  );
  // Which tombstones a resourceVersion reaches is decided by the one ordering function.
  const { rows } = await client.query<{
    watcher: string;
    sink: string;
    key: string;
    resource_version: string;
  }>(`SELECT watcher, sink, key, resource_version FROM ${s}.tombstones WHERE watcher = ANY($1::text[])`, [
    watchers,
  ]);
  const gone = rows.filter((row) =>
    tombstoneExpired(
      { key: toObjectKey(row.key), uid: undefined, resourceVersion: row.resource_version || undefined },
      batch.versions.get(row.watcher)?.resourceVersion ?? '',
    ),
  );
  if (gone.length === 0) return;
  await client.query(
    `DELETE FROM ${s}.tombstones t
      USING unnest($1::text[], $2::text[], $3::text[]) AS u(watcher, sink, key)
      WHERE t.watcher = u.watcher AND t.sink = u.sink AND t.key = u.key`,
    [gone.map((r) => r.watcher), gone.map((r) => r.sink), gone.map((r) => r.key)],
  );
}
