/**
 * Where `raven run` serves /healthz, /readyz and /metrics, as a process against the real control
 * plane: `--port` and `--listen` override the config, a busy port ends the daemon with status 1
 * and a message naming the flags and the config field, a bad flag is a usage error (status 2),
 * the reconnect count is a Prometheus counter with `_total`, and an idle daemon, which still
 * reports its event-loop lag, wakes a few times a second rather than for a 10 ms sampling timer.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { processWakeUps } from '../../bench/lib/proc.js';
import { sharedCluster } from '../harness/test-cluster.js';
import { healthUrl, httpGet, runRaven, startRaven, until } from './daemon-process.js';

/** A port something else already listens on, for as long as the test runs. */
async function busyPort(t: TestContext): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return (server.address() as AddressInfo).port;
}

test('raven run on a port in use exits 1 naming the port, --port, --listen and server.port', async (t) => {
  const plane = await sharedCluster();
  const port = await busyPort(t);
  const run = await runRaven(['run', '--port', String(port)], { kubeconfig: plane.kubeconfig });
  assert.equal(run.code, 1, run.stderr);
  assert.match(
    run.stderr,
    new RegExp(
      `cannot serve /healthz, /readyz and /metrics on 127\\.0\\.0\\.1:${port}: the port is in use by another program; set server\\.port \\(0 picks a free port\\) or server\\.enabled: false, or use raven run --port PORT / --listen ADDRESS:PORT`,
    ),
  );
});

test('raven run --listen serves there, and /metrics has raven_watcher_reconnects_total as a counter', async (t) => {
  const plane = await sharedCluster();
  const raven = startRaven(['run', '--listen', '127.0.0.1:0'], { kubeconfig: plane.kubeconfig });
  t.after(() => raven.kill('SIGKILL'));
  const url = await healthUrl(raven);
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  let metrics = '';
  await until(
    'a reconnect sample per watcher',
    async () => {
      metrics = (await httpGet(`${url}/metrics`)).body;
      return /^raven_watcher_reconnects_total\{watcher="[^"]+"\} \d+$/m.test(metrics);
    },
    { show: () => metrics },
  );
  assert.match(metrics, /^# TYPE raven_watcher_reconnects_total counter$/m);
  assert.doesNotMatch(metrics, /^raven_watcher_reconnects[ {]/m);
  raven.kill('SIGINT');
  assert.equal((await raven.exited).code, 0, raven.stderr());
});

test('an idle raven run wakes a few times a second, and still reports its event-loop lag', async (t) => {
  // prom-client samples the event-loop lag with a 10 ms timer unless told otherwise: 98 wake-ups a
  // second and most of an idle daemon's CPU. Counted from outside (the main thread's voluntary
  // context switches in /proc), over a window of wall time: a busy machine makes a process wake
  // less often, never more, so the bound cannot fail for the machine's sake.
  const plane = await sharedCluster();
  const raven = startRaven(['run', '--listen', '127.0.0.1:0'], { kubeconfig: plane.kubeconfig });
  t.after(() => raven.kill('SIGKILL'));
  const url = await healthUrl(raven);
  let metrics = '';
  await until(
    'the watchers synced and a lag sample',
    async () => {
      metrics = (await httpGet(`${url}/metrics`)).body;
      return (
        /^raven_watcher_synced\{[^}]*\} 1$/m.test(metrics) &&
        !/^raven_watcher_synced\{[^}]*\} 0$/m.test(metrics) &&
        /^raven_nodejs_eventloop_lag_p99_seconds \d/m.test(metrics)
      );
    },
    { show: () => metrics },
  );
  const pid = raven.pid ?? assert.fail('no pid');
  await delay(2000); // past the burst of the first scrape
  const before = { wakeUps: await processWakeUps(pid), at: performance.now() };
  await delay(5000);
  const perSecond = ((await processWakeUps(pid)) - before.wakeUps) / ((performance.now() - before.at) / 1000);
  assert.ok(perSecond < 40, `the idle daemon woke ${perSecond.toFixed(1)} times a second`);
  raven.kill('SIGINT');
  assert.equal((await raven.exited).code, 0, raven.stderr());
});

test('a --port or --listen that does not parse is a usage error naming the flag', async () => {
  const bad = await runRaven(['run', '--port', '99999']);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /--port must be a port from 0 to 65535 \(0 picks a free one\); got "99999"/);
  const listen = await runRaven(['run', '--listen', '9479']);
  assert.equal(listen.code, 2, listen.stderr);
  assert.match(listen.stderr, /--listen must be ADDRESS:PORT, e\.g\. 127\.0\.0\.1:9479/);
});

test('--log-format pretty writes readable lines even when stderr is not a terminal; a bad one is a usage error', async (t) => {
  const plane = await sharedCluster();
  const raven = startRaven(['run', '--port', '0', '--log-format', 'pretty'], {
    kubeconfig: plane.kubeconfig,
  });
  t.after(() => raven.kill('SIGKILL'));
  await until('the start-up line', () => /serving \/healthz/.test(raven.stderr()) || raven.exitedYet(), {
    show: () => raven.stderr(),
  });
  assert.equal(raven.logs.length, 0, 'no line is JSON');
  assert.match(raven.stderr(), /INFO.*serving \/healthz, \/readyz and \/metrics/);
  const bad = await runRaven(['run', '--log-format', 'xml']);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /--log-format must be json or pretty; got "xml"/);
});
