/**
 * Every example config as a user runs it: `raven check -c` exits 0 with nothing set (as the
 * README shows it), and `raven run -c` starts against the real control plane, becomes ready (every
 * watcher listed, handler modules loaded) and stops with status 0, with nothing on stderr but its
 * own log lines (no Node warning such as MaxListenersExceededWarning). Each runs from its place in
 * examples/configs/, as a user runs it from a checkout, with XDG_STATE_HOME pointing at a
 * temporary directory: its checkpoint, output files and redaction key land in its own state
 * directory there, and examples/ is left exactly as it was (`git status --porcelain --ignored`).
 * A local HTTP receiver stands in for every chat, webhook and broker URL through the environment
 * variables the examples read, and real PostgreSQL, NATS and Redis servers (started from Debian's
 * packages) for the streaming sinks' URLs; the cluster's kubeconfig and context replace theirs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join, resolve } from 'node:path';
import { HttpReceiver } from '../harness/http-receiver.js';
import { NatsServer } from '../harness/nats-server.js';
import { PostgresServer } from '../harness/postgres-server.js';
import { RedisServer } from '../harness/redis-server.js';
import { sharedCluster } from '../harness/test-cluster.js';
import { exampleArgs, runRaven, startRaven, tempDir, until, waitReady } from './daemon-process.js';

const root = resolve(import.meta.dirname, '..', '..');
const examples = join(root, 'examples');
const run = promisify(execFile);

/** What git sees in examples/: changed, untracked and ignored files alike. */
async function examplesStatus(): Promise<string> {
  const { stdout } = await run(
    'git',
    ['status', '--porcelain', '--ignored', '--untracked-files=all', '--', 'examples'],
    {
      cwd: root,
    },
  );
  return stdout;
}
const configs = (await readdir(join(examples, 'configs'))).filter((name) => name.endsWith('.yaml'));

test('there are example configs to run', () => {
  assert.ok(configs.length >= 4, configs.join(', '));
});

for (const name of configs) {
  test(`examples/configs/${name} passes raven check as it is`, async () => {
    // Against the cluster, whose kubeconfig and context replace the example's.
    const plane = await sharedCluster();
    const run = await runRaven(exampleArgs('check', name, plane.kubeconfig));
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  });

  test(`examples/configs/${name} runs against the cluster and stops cleanly`, async (t) => {
    const plane = await sharedCluster();
    // The leader-elected example takes its Lease in namespace raven.
    await plane.adminRequest('POST', '/api/v1/namespaces', { metadata: { name: 'raven' } });
    const receiver = await HttpReceiver.start();
    t.after(() => receiver.close());
    const dir = await tempDir(t);
    const before = await examplesStatus();
    const text = await readFile(join(examples, 'configs', name), 'utf8');
    const servers: Record<string, string> = {};
    if (text.includes('${PG_URL')) {
      const postgres = await PostgresServer.start();
      t.after(() => postgres.stop());
      servers.PG_URL = postgres.url();
    }
    if (text.includes('${NATS_URL')) {
      const nats = await NatsServer.start();
      t.after(() => nats.stop());
      servers.NATS_URL = nats.url;
    }
    if (text.includes('${REDIS_URL')) {
      const redis = await RedisServer.start();
      t.after(() => redis.stop());
      servers.REDIS_URL = redis.url();
    }
    const raven = startRaven(
      // The start-up line naming the health server's URL is at info.
      [...exampleArgs('run', name, plane.kubeconfig), '--port', '0', '--log-level', 'info'],
      {
        env: {
          WEBHOOK_URL: receiver.url('/webhook'),
          WEBHOOK_SECRET: 'example-secret',
          SLACK_WEBHOOK_URL: receiver.url('/slack'),
          TEAMS_WEBHOOK_URL: receiver.url('/teams'),
          BROKER_URL: receiver.url('/broker'),
          XDG_STATE_HOME: dir,
          // A standby behind a lease left by another run is ready too; its own name keeps it apart.
          POD_NAME: `examples-${process.pid}`,
          ...servers,
        },
      },
    );
    t.after(() => raven.kill('SIGKILL'));
    await waitReady(raven);
    // Every example that keeps a checkpoint keeps it in its own state directory. A leader-elected
    // one is ready as a standby and opens its checkpoint once it leads: wait for that.
    const state = join(dir, 'raven', name.replace(/\.yaml$/, ''));
    const keepsCheckpoint = /^checkpoint:/m.test(text);
    if (keepsCheckpoint) {
      assert.match(text, /^checkpoint: \{ path: '\$\{RAVEN_STATE_DIR\}\/raven-state\.db' \}$/m);
      await until(
        `the checkpoint in ${state}`,
        () => existsSync(join(state, 'raven-state.db')) || raven.exitedYet(),
        { timeoutMs: 120_000, show: () => raven.stderr() },
      );
    }
    raven.kill('SIGINT');
    const exit = await raven.exited;
    assert.equal(exit.code, 0, raven.stderr());
    assert.ok(!raven.logs.some((l) => l.level >= 50), `no error logged:\n${raven.stderr()}`);
    const notLogs = raven
      .stderr()
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('{'));
    assert.deepEqual(notLogs, [], `stderr holds only log lines (no Node warning):\n${raven.stderr()}`);
    assert.equal(await examplesStatus(), before, 'running the example changed nothing in examples/');
    if (keepsCheckpoint) {
      assert.ok(existsSync(join(state, 'raven-state.db')), `the checkpoint is in ${state}`);
      assert.ok(existsSync(join(state, 'redaction.key')), `the redaction key is beside it in ${state}`);
    }
  });
}
