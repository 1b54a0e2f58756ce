import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import sqlite from 'node-sqlite3-wasm';
import { CheckpointError } from '../../../../src/raven/checkpoint/checkpoint-error.js';
import { changesSince } from '../../../../src/raven/checkpoint/changes-since.js';
import { SqliteCheckpointStore } from '../../../../src/raven/checkpoint/sqlite-checkpoint-store.js';
import { FakeClock } from '../../../../src/testing/fake-clock.js';
import { recordJson, recordLine } from '../../../../src/raven/model/record-json.js';
import { checkpointStoreContract } from './checkpoint-store-contract.js';
import { changeEvent, countedPod, pod, PODS, TIME } from './fixtures.js';

function tempFile(): { path: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'raven-checkpoint-'));
  return { path: join(dir, 'checkpoints.db'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

checkpointStoreContract('SqliteCheckpointStore', () => {
  const { path, cleanup } = tempFile();
  return { open: (clock) => SqliteCheckpointStore.open(path, { clock }), persists: true, cleanup };
});

/** Run `body` with a fresh checkpoint path, removed afterwards. */
async function withFile(body: (path: string) => Promise<void> | void): Promise<void> {
  const { path, cleanup } = tempFile();
  try {
    await body(path);
  } finally {
    cleanup();
  }
}

function expectCheckpointError(code: string, ...fragments: string[]): (err: unknown) => boolean {
  return (err) => {
    assert.ok(err instanceof CheckpointError, `expected a CheckpointError, got ${String(err)}`);
    assert.equal(err.code, code);
    for (const fragment of fragments) {
      assert.ok(err.message.includes(fragment), `${JSON.stringify(fragment)} not in: ${err.message}`);
    }
    return true;
  };
}

test('buffered writes reach the file when the flush interval elapses on the injected clock', () =>
  withFile(async (path) => {
    const clock = new FakeClock();
    const store = SqliteCheckpointStore.open(path, { clock, flushIntervalMs: 500 });
    try {
      store.recordDelivered(changeEvent('added', pod('d', 'a')), 'audit');
      store.recordDelivered(changeEvent('added', pod('d', 'b')), 'audit');
      assert.equal(store.stats().entries, 0);
      await clock.tick(499);
      assert.equal(store.stats().entries, 0);
      await clock.tick(1);
      assert.equal(store.stats().entries, 2);
      assert.equal(clock.pending, 1, 'only the lock heartbeat is left scheduled');
    } finally {
      await store.close();
    }
  }));

test('a second store on the same file is refused while the first holds it', () =>
  withFile(async (path) => {
    const first = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    try {
      assert.throws(
        () => SqliteCheckpointStore.open(path, { clock: new FakeClock() }),
        expectCheckpointError(
          'ERR_CHECKPOINT_LOCKED',
          path,
          `pid ${process.pid}`,
          'one Raven daemon per checkpoint file',
        ),
      );
    } finally {
      await first.close();
    }
    assert.equal(existsSync(`${path}.owner`), false);
    const second = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    await second.close();
  }));

const readOwner = (path: string): { pid: number; hostname: string; token: unknown } =>
  JSON.parse(readFileSync(`${path}.owner`, 'utf8')) as { pid: number; hostname: string; token: unknown };

const writeLock = (path: string, owner: object): void =>
  writeFileSync(`${path}.owner`, JSON.stringify(owner));

test('a lock held by another live process on this host is refused, naming that process', () =>
  withFile((path) => {
    writeLock(path, { pid: process.ppid, hostname: hostname(), token: 't', heartbeat: 0 });
    assert.throws(
      () => SqliteCheckpointStore.open(path, { clock: new FakeClock() }),
      expectCheckpointError(
        'ERR_CHECKPOINT_LOCKED',
        `pid ${process.ppid} on ${hostname()}`,
        `delete ${path}.owner`,
      ),
    );
    assert.equal(existsSync(path), false, 'the database is not touched without the lock');
  }));

test('a lock left by a process that is gone is reclaimed', () =>
  withFile(async (path) => {
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    writeLock(path, { pid: gone, hostname: hostname(), token: 't', heartbeat: 0 });
    const store = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    const owner = readOwner(path);
    assert.equal(owner.pid, process.pid, 'the lock file now names this process');
    assert.notEqual(owner.token, 't', 'under a token of its own');
    await store.close();
    assert.equal(existsSync(`${path}.owner`), false, 'and released on close, which only its holder does');
  }));

test('a lock with this process id that this process does not hold is reclaimed (a restarted container)', () =>
  withFile(async (path) => {
    writeLock(path, { pid: process.pid, hostname: hostname(), token: 'earlier', heartbeat: 0 });
    const store = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    const owner = readOwner(path);
    assert.equal(owner.pid, process.pid);
    assert.equal(owner.hostname, hostname());
    assert.notEqual(owner.token, 'earlier', 'the lock is this store’s now, under a token of its own');
    await store.close();
    assert.equal(existsSync(`${path}.owner`), false, 'and released on close, which only its holder does');
  }));

test('an unreadable lock file is reclaimed', () =>
  withFile(async (path) => {
    writeFileSync(`${path}.owner`, '');
    const store = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    const owner = readOwner(path);
    assert.equal(owner.pid, process.pid, 'the lock file now names this process');
    assert.equal(typeof owner.token, 'string');
    await store.close();
    assert.equal(existsSync(`${path}.owner`), false, 'and released on close, which only its holder does');
  }));

test('a lock from another host is refused while its heartbeat is fresh and reclaimed once it is stale', () =>
  withFile(async (path) => {
    const clock = new FakeClock();
    writeLock(path, { pid: 1, hostname: 'elsewhere', token: 't', heartbeat: clock.now() - 30_000 });
    assert.throws(
      () => SqliteCheckpointStore.open(path, { clock }),
      expectCheckpointError('ERR_CHECKPOINT_LOCKED', 'pid 1 on elsewhere'),
    );
    assert.equal(readOwner(path).hostname, 'elsewhere', 'a refused open leaves the lock as it was');
    writeLock(path, { pid: 1, hostname: 'elsewhere', token: 't', heartbeat: clock.now() - 61_000 });
    const store = SqliteCheckpointStore.open(path, { clock });
    const owner = readOwner(path);
    assert.deepEqual(
      [owner.pid, owner.hostname],
      [process.pid, hostname()],
      'the stale lock is this store’s now',
    );
    assert.notEqual(owner.token, 't');
    await store.close();
    assert.equal(existsSync(`${path}.owner`), false, 'and released on close, which only its holder does');
  }));

test('the lock holder rewrites its heartbeat on the clock', () =>
  withFile(async (path) => {
    const clock = new FakeClock();
    const store = SqliteCheckpointStore.open(path, { clock, lock: { refreshMs: 5000 } });
    try {
      const heartbeat = (): number =>
        (JSON.parse(readFileSync(`${path}.owner`, 'utf8')) as { heartbeat: number }).heartbeat;
      const start = heartbeat();
      await clock.tick(5000);
      assert.equal(heartbeat(), start + 5000);
    } finally {
      await store.close();
    }
  }));

test('a lock directory left by a crash in the middle of a transaction is cleared', () =>
  withFile(async (path) => {
    const store = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    store.recordBaseline('pods', 'audit', [pod('d', 'a')]);
    store.destroy();
    mkdirSync(`${path}.lock`);
    const again = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    try {
      assert.equal([...again.entries('pods', 'audit')].length, 1);
      again.recordDelivered(changeEvent('added', pod('d', 'b')), 'audit');
      await again.flush();
    } finally {
      await again.close();
    }
  }));

test('a file written by a newer Raven is refused with its schema version and what to do', () =>
  withFile(async (path) => {
    await SqliteCheckpointStore.open(path, { clock: new FakeClock() }).close();
    const db = new sqlite.Database(path);
    db.run("UPDATE meta SET value = '99' WHERE name = 'schema_version'");
    db.close();
    assert.throws(
      () => SqliteCheckpointStore.open(path, { clock: new FakeClock() }),
      expectCheckpointError(
        'ERR_CHECKPOINT_SCHEMA',
        path,
        'schema version 99',
        'newer Raven',
        'move the file away',
      ),
    );
    assert.equal(existsSync(`${path}.owner`), false, 'the lock is released after a refused open');
  }));

/** The tables of schema version 1, as Raven wrote them before resuming watches existed. */
const VERSION_1_TABLES = `
  CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE checkpoints (watcher TEXT NOT NULL, sink TEXT NOT NULL, PRIMARY KEY (watcher, sink)) WITHOUT ROWID;
  CREATE TABLE states (id INTEGER PRIMARY KEY, watcher TEXT NOT NULL, key TEXT NOT NULL, uid TEXT NOT NULL,
    resource_version TEXT NOT NULL, object TEXT NOT NULL, UNIQUE (watcher, key, uid, resource_version));
  CREATE TABLE delivered (watcher TEXT NOT NULL, sink TEXT NOT NULL, key TEXT NOT NULL,
    state INTEGER NOT NULL REFERENCES states (id), PRIMARY KEY (watcher, sink, key)) WITHOUT ROWID;
  CREATE INDEX delivered_by_state ON delivered (state);`;

test('a version 1 file is migrated: its entries kept, tombstones and confirmed resourceVersions added', () =>
  withFile(async (path) => {
    // Version 1 as Raven wrote it before resuming watches existed.
    const db = new sqlite.Database(path);
    db.exec(`
      ${VERSION_1_TABLES}
      INSERT INTO meta VALUES ('schema_version', '1');
      INSERT INTO checkpoints VALUES ('pods', 'audit');
      INSERT INTO states VALUES (1, 'pods', 'd/a', 'uid-a', '5', '{"metadata":{"name":"a","namespace":"d"}}');
      INSERT INTO delivered VALUES ('pods', 'audit', 'd/a', 1);
    `);
    db.close();
    const store = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    try {
      assert.deepEqual(
        [...store.entries('pods', 'audit')].map((e) => `${e.key}@${e.resourceVersion ?? '-'}`),
        ['d/a@5'],
      );
      assert.equal(
        store.confirmedVersion('pods'),
        undefined,
        'nothing to resume from: the first start lists',
      );
      store.recordDelivered(changeEvent('deleted', pod('d', 'a', { rv: '9' })), 'audit');
      store.recordConfirmedVersion('pods', { resourceVersion: '8', scope: 'pods', sinks: ['audit'], at: 0 });
      await store.flush();
      assert.deepEqual(
        [...store.tombstones('pods', 'audit')].map((t) => `${t.key}@${t.resourceVersion ?? '-'}`),
        ['d/a@9'],
      );
    } finally {
      await store.close();
    }
    const check = new sqlite.Database(path);
    try {
      assert.equal(check.get("SELECT value FROM meta WHERE name = 'schema_version'")?.value, '3');
    } finally {
      check.close();
    }
  }));

test('a version 2 file is migrated: its entries kept without a stretch, their tombstones named by the state they end, new entries keep theirs', () =>
  withFile(async (path) => {
    // Version 2 as Raven wrote it before entries kept where their stretch in scope started.
    const db = new sqlite.Database(path);
    db.exec(`
      ${VERSION_1_TABLES}
      CREATE TABLE tombstones (watcher TEXT NOT NULL, sink TEXT NOT NULL, key TEXT NOT NULL, uid TEXT NOT NULL,
        resource_version TEXT NOT NULL, PRIMARY KEY (watcher, sink, key)) WITHOUT ROWID;
      CREATE TABLE watchers (watcher TEXT PRIMARY KEY, resource_version TEXT NOT NULL, scope TEXT NOT NULL,
        sinks TEXT NOT NULL, confirmed_at INTEGER NOT NULL) WITHOUT ROWID;
      INSERT INTO meta VALUES ('schema_version', '2');
      INSERT INTO checkpoints VALUES ('pods', 'audit');
      INSERT INTO states VALUES (1, 'pods', 'd/a', 'uid-a', '5',
        '{"metadata":{"name":"a","namespace":"d","uid":"uid-a","resourceVersion":"5"}}');
      INSERT INTO delivered VALUES ('pods', 'audit', 'd/a', 1);
      INSERT INTO watchers VALUES ('pods', '5', 'pods', '["audit"]', 0);
    `);
    db.close();
    let store = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    try {
      const entries = [...store.entries('pods', 'audit')];
      assert.deepEqual(
        entries.map((e) => `${e.key}@${e.resourceVersion ?? '-'} since ${e.since ?? '-'}`),
        ['d/a@5 since -'],
        'the old entry is kept; where its stretch started is unknown',
      );
      assert.equal(store.confirmedVersion('pods')?.resourceVersion, '5', 'the resume point is kept');
      // Gone after an expired resume: the tombstone is named as before, by the state it ends.
      const [gone] = changesSince(entries, [], {
        watcher: 'pods',
        resource: PODS,
        origin: 'restart',
        now: () => TIME,
      }).events;
      assert.equal(gone?.id, 'pods:uid-a:5:deleted');
      assert.equal(gone.inScopeSince, undefined);
      store.recordDelivered(changeEvent('added', pod('d', 'b', { rv: '7' }), 'pods', '7'), 'audit');
      await store.close();
      store = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
      assert.deepEqual(
        [...store.entries('pods', 'audit')].map((e) => `${e.key} since ${e.since ?? '-'}`),
        ['d/a since -', 'd/b since 7'],
      );
    } finally {
      await store.close();
    }
    const check = new sqlite.Database(path);
    try {
      assert.equal(check.get("SELECT value FROM meta WHERE name = 'schema_version'")?.value, '3');
    } finally {
      check.close();
    }
  }));

test('a corrupt file is refused with a message naming the path and what to do', () =>
  withFile((path) => {
    writeFileSync(path, 'this is not an SQLite database\n'.repeat(200));
    assert.throws(
      () => SqliteCheckpointStore.open(path, { clock: new FakeClock() }),
      expectCheckpointError('ERR_CHECKPOINT_UNREADABLE', path, `mv ${path} ${path}.broken`, 'no checkpoint'),
    );
  }));

test('a damaged checkpoint file is refused rather than half read', () =>
  withFile(async (path) => {
    const store = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    store.recordBaseline(
      'pods',
      'audit',
      Array.from({ length: 300 }, (_, i) => pod('d', `p${i}`)),
    );
    await store.close();
    const bytes = readFileSync(path);
    bytes.fill(0xa5, 4096 * 2, 4096 * 4);
    writeFileSync(path, bytes);
    assert.throws(
      () => SqliteCheckpointStore.open(path, { clock: new FakeClock() }),
      expectCheckpointError('ERR_CHECKPOINT_UNREADABLE', path, 'move it away'),
    );
  }));

test('an SQLite database that is not a checkpoint is refused', () =>
  withFile((path) => {
    const db = new sqlite.Database(path);
    db.exec('CREATE TABLE employees (name TEXT)');
    db.close();
    assert.throws(
      () => SqliteCheckpointStore.open(path, { clock: new FakeClock() }),
      expectCheckpointError('ERR_CHECKPOINT_UNREADABLE', path, 'not a Raven checkpoint'),
    );
  }));

test('a directory that does not exist is reported with the path', () => {
  const path = join(tmpdir(), 'raven-no-such-dir', 'nested', 'checkpoints.db');
  assert.throws(
    () => SqliteCheckpointStore.open(path, { clock: new FakeClock() }),
    expectCheckpointError('ERR_CHECKPOINT_UNREADABLE', `checkpoint file ${path}`, 'directory exists'),
  );
});

test('10k objects for two sinks round-trip through the file (measured, not asserted)', (t) =>
  withFile(async (path) => {
    const count = 10_000;
    const objects = Array.from({ length: count }, (_, i) =>
      pod(`ns-${i % 20}`, `pod-${i}`, {
        uid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`,
        rv: `${1000 + i}`,
      }),
    );
    const jsonBytes = objects.reduce((sum, o) => sum + JSON.stringify(o).length, 0);
    const ms = (start: bigint): string => (Number(process.hrtime.bigint() - start) / 1e6).toFixed(0);

    let start = process.hrtime.bigint();
    const store = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    for (const sink of ['audit', 'webhook']) {
      for (const object of objects) store.recordDelivered(changeEvent('added', object), sink);
    }
    await store.flush();
    t.diagnostic(`record + flush ${count} objects x 2 sinks: ${ms(start)} ms`);
    const stats = store.stats();
    await store.close();
    const size = statSync(path).size;
    t.diagnostic(
      `file size ${(size / 1024 / 1024).toFixed(2)} MiB (${Math.round(size / count)} B per object; ` +
        `objects average ${Math.round(jsonBytes / count)} B of JSON); states ${stats.states}, entries ${stats.entries}`,
    );

    start = process.hrtime.bigint();
    const again = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    t.diagnostic(`open with integrity check: ${ms(start)} ms`);
    try {
      start = process.hrtime.bigint();
      const entries = [...again.entries('pods', 'audit')];
      t.diagnostic(`read back ${entries.length} entries: ${ms(start)} ms`);
      assert.equal(entries.length, count);

      const current = objects.map((o, i) =>
        i % 10 === 0
          ? pod(o.metadata?.namespace, o.metadata?.name ?? '', {
              uid: o.metadata?.uid ?? '',
              rv: `${5000 + i}`,
              image: 'v2',
            })
          : o,
      );
      start = process.hrtime.bigint();
      const { events } = changesSince(entries, current, {
        watcher: 'pods',
        resource: PODS,
        origin: 'restart',
        now: () => TIME,
      });
      t.diagnostic(`compare ${count} objects, ${events.length} modified: ${ms(start)} ms`);
      assert.equal(events.length, count / 10);

      start = process.hrtime.bigint();
      for (const event of events) again.recordDelivered(event, 'audit');
      await again.flush();
      t.diagnostic(`record + flush ${events.length} modified: ${ms(start)} ms`);
    } finally {
      await again.close();
    }
  }));

test('objects are stored as UTF-8 JSON text, readable by any SQLite client, non-ASCII included', () =>
  withFile(async (path) => {
    const object = pod('d', 'a', { rv: '7' });
    object.metadata = { ...object.metadata, annotations: { note: 'café ☕ 𝄞 "quoted" \\ \n' } };
    const store = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    try {
      store.recordDelivered(changeEvent('added', object), 'audit');
      await store.flush();
      assert.deepEqual([...store.entries('pods', 'audit')][0]?.object, object);
    } finally {
      await store.close();
    }
    const db = new sqlite.Database(path);
    try {
      const row = db.get('SELECT typeof(object) AS type, object FROM states');
      assert.equal(row?.type, 'text');
      assert.equal(row.object, JSON.stringify(object));
    } finally {
      db.close();
    }
  }));

test('an object a sink already serialised is stored from those bytes, as the same text, non-ASCII included', () =>
  withFile(async (path) => {
    const { object, reads } = countedPod('a', '7');
    object.metadata = { ...object.metadata, annotations: { note: 'café ☕ 𝄞' } };
    const event = changeEvent('added', object);
    // A text sink and a line sink share one serialisation.
    const text = recordJson(event);
    assert.equal(recordLine(event).toString(), `${text}\n`);
    const store = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    try {
      store.recordDelivered(event, 'audit');
      store.recordDelivered(event, 'archive');
      await store.flush();
      assert.equal(reads(), 1, 'serialised once, by the sink');
      assert.deepEqual(
        [...store.entries('pods', 'archive')][0]?.object,
        (JSON.parse(text) as { object: unknown }).object,
      );
    } finally {
      await store.close();
    }
    const db = new sqlite.Database(path);
    try {
      const rows = db.all('SELECT typeof(object) AS type, object FROM states');
      assert.equal(rows.length, 1, 'one state for both sinks');
      assert.equal(rows[0]?.type, 'text');
      assert.equal(rows[0].object, JSON.stringify((JSON.parse(text) as { object: unknown }).object));
    } finally {
      db.close();
    }
  }));

test('a file without the clean-up triggers gets them when opened, keeping its schema version, and they keep states and tombstones right', () =>
  withFile(async (path) => {
    const first = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    first.recordDelivered(changeEvent('added', pod('d', 'a', { rv: '5' })), 'audit');
    await first.close();
    const old = new sqlite.Database(path);
    try {
      for (const row of old.all("SELECT name FROM sqlite_master WHERE type = 'trigger'"))
        old.run(`DROP TRIGGER ${row.name as string}`);
    } finally {
      old.close();
    }
    const store = SqliteCheckpointStore.open(path, { clock: new FakeClock() });
    try {
      store.recordDelivered(changeEvent('modified', pod('d', 'a', { rv: '6' })), 'audit');
      store.recordDelivered(changeEvent('deleted', pod('d', 'b', { rv: '7' })), 'audit');
      await store.flush();
      assert.deepEqual(store.stats(), { checkpoints: 1, entries: 1, states: 1 }, 'the state of rv 5 went');
      assert.equal([...store.tombstones('pods', 'audit')].length, 1);
      store.recordDelivered(changeEvent('added', pod('d', 'b', { rv: '8' })), 'audit');
      await store.flush();
      assert.deepEqual([...store.tombstones('pods', 'audit')], [], 'an entry replaces the tombstone');
      assert.equal(store.stats().states, 2);
    } finally {
      await store.close();
    }
    const db = new sqlite.Database(path);
    try {
      const triggers = db.all("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name");
      assert.equal(triggers.length, 3);
      assert.equal(db.get("SELECT value FROM meta WHERE name = 'schema_version'")?.value, '3');
    } finally {
      db.close();
    }
  }));
