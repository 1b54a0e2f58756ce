/**
 * Every example config as a user runs it: `raven check -c` exits 0 with nothing set (as the
 * README shows it), and `raven run -c` starts against the real control plane, becomes ready (every
 * watcher listed, handler modules loaded) and stops with status 0. The examples are copied to a
 * temporary directory so their relative paths (checkpoints, audit files) are written there; a
 * local HTTP receiver stands in for every chat, webhook and broker URL through the environment
 * variables the examples read, and real PostgreSQL, NATS and Redis servers (started from Debian's
 * packages) for the streaming sinks' URLs; the cluster's kubeconfig and context replace theirs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { HttpReceiver } from '../harness/http-receiver.js';
import { NatsServer } from '../harness/nats-server.js';
import { PostgresServer } from '../harness/postgres-server.js';
import { RedisServer } from '../harness/redis-server.js';
import { sharedCluster } from '../harness/test-cluster.js';
import { runRaven, startRaven, tempDir, waitReady } from './daemon-process.js';

const examples = resolve(import.meta.dirname, '..', '..', 'examples');
const configs = (await readdir(join(examples, 'configs'))).filter((name) => name.endsWith('.yaml'));

test('there are example configs to run', () => {
  assert.ok(configs.length >= 4, configs.join(', '));
});

for (const name of configs) {
  test(`examples/configs/${name} passes raven check as it is`, async () => {
    const run = await runRaven(['check', '-c', join(examples, 'configs', name)]);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  });

  test(`examples/configs/${name} runs against the cluster and stops cleanly`, async (t) => {
    const plane = await sharedCluster();
    // The leader-elected example takes its Lease in namespace raven.
    await plane.adminRequest('POST', '/api/v1/namespaces', { metadata: { name: 'raven' } });
    const receiver = await HttpReceiver.start();
    t.after(() => receiver.close());
    const dir = await tempDir(t);
    await cp(examples, dir, { recursive: true });
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
      [
        'run',
        '-c',
        join(dir, 'configs', name),
        '--kubeconfig',
        plane.kubeconfig,
        '--context',
        'raven-local',
        '--port',
        '0',
        // The start-up line naming the health server's URL is at info.
        '--log-level',
        'info',
      ],
      {
        env: {
          WEBHOOK_URL: receiver.url('/webhook'),
          WEBHOOK_SECRET: 'example-secret',
          SLACK_WEBHOOK_URL: receiver.url('/slack'),
          TEAMS_WEBHOOK_URL: receiver.url('/teams'),
          BROKER_URL: receiver.url('/broker'),
          RAVEN_CHECKPOINT: join(dir, 'raven-state.db'),
          // A standby behind a lease left by another run is ready too; its own name keeps it apart.
          POD_NAME: `examples-${process.pid}`,
          ...servers,
        },
      },
    );
    t.after(() => raven.kill('SIGKILL'));
    await waitReady(raven);
    raven.kill('SIGINT');
    const exit = await raven.exited;
    assert.equal(exit.code, 0, raven.stderr());
    assert.ok(!raven.logs.some((l) => l.level >= 50), `no error logged:\n${raven.stderr()}`);
  });
}
