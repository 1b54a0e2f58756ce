/**
 * `raven run` with a syslog sink against Debian's rsyslogd (test/harness/rsyslog.ts): every change
 * arrives as one RFC 5424 message; with rsyslogd down for 30 s, the changes made meanwhile are
 * retried and arrive once it is back, none lost and none twice; after a restart of Raven, nothing
 * delivered before comes again. Over TLS and UDP, changes arrive as well.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { sharedCluster, freshNamespace, deleteNamespace } from '../harness/test-cluster.js';
import { RsyslogServer } from '../harness/rsyslog.js';
import {
  ok,
  startRaven,
  tempDir,
  until,
  waitReady,
  writeConfig,
  type DeliveredEvent,
} from './daemon-process.js';

/** The outage the issue asks every sink to survive. Setup, not a deadline: nothing waits on it to pass. */
const OUTAGE_MS = 30_000;

/** The change events in rsyslog's messages (the body after `<pri>1 time host app pid msgid - `). */
function delivered(messages: readonly string[], ns: string): DeliveredEvent[] {
  return messages
    .map((m) => JSON.parse(m.slice(m.indexOf(' - ') + 3)) as DeliveredEvent)
    .filter((e) => e.namespace === ns && e.name !== 'kube-root-ca.crt');
}

test('a syslog sink delivers every change once across a 30 s rsyslog outage and a Raven restart', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const rsyslog = await RsyslogServer.start();
  t.after(() => rsyslog.close());
  const dir = await tempDir(t);
  await writeFile(join(dir, 'ca.pem'), rsyslog.ca);
  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
checkpoint: { path: ./state.db }
watchers:
  - { name: configmaps, resource: configmaps, namespaces: [${ns}] }
sinks:
  - name: syslog
    type: syslog
    host: 127.0.0.1
    port: ${rsyslog.tcpPort}
    # Enough attempts to outlast the outage with backoff capped at 5 s.
    delivery: { maxAttempts: 30, maxBackoffMs: 5000 }
  - { name: syslog-tls, type: syslog, host: 127.0.0.1, port: ${rsyslog.tlsPort}, transport: tls, caFile: ./ca.pem, appName: raven-tls }
  - { name: syslog-udp, type: syslog, host: 127.0.0.1, port: ${rsyslog.udpPort}, transport: udp, appName: raven-udp }
`,
  );
  const start = () => {
    const raven = startRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
    t.after(async () => {
      raven.kill('SIGKILL');
      await raven.exited;
    });
    return raven;
  };
  let raven = start();
  await waitReady(raven);
  const api = `/api/v1/namespaces/${ns}/configmaps`;
  const byApp = async (app: string) =>
    delivered(
      (await rsyslog.messages()).filter((m) => m.split(' ')[3] === app),
      ns,
    );
  const ids = async () => (await byApp('raven')).map((e) => e.id);

  await ok(plane.adminRequest('POST', api, { metadata: { name: 'before' }, data: { v: '1' } }));
  await until(
    'the first change arrives over TCP, TLS and UDP',
    async () =>
      (await Promise.all(['raven', 'raven-tls', 'raven-udp'].map(byApp))).every((list) =>
        list.some((e) => e.name === 'before'),
      ),
    { show: () => `${raven.stderr()}\n${rsyslog.stderr()}` },
  );

  await rsyslog.stop();
  const during = ['down-1', 'down-2', 'down-3'];
  for (const name of during)
    await ok(plane.adminRequest('POST', api, { metadata: { name }, data: { v: '1' } }));
  await ok(plane.adminRequest('PATCH', `${api}/down-1`, { data: { v: '2' } }));
  await ok(plane.adminRequest('DELETE', `${api}/down-2`));
  await delay(OUTAGE_MS);
  await rsyslog.begin();

  // 1 (before) + 3 added + 1 modified + 1 deleted.
  await until('every change made during the outage arrives', async () => (await ids()).length >= 6, {
    show: () => raven.stderr(),
  });
  raven.kill('SIGTERM');
  assert.deepEqual(await raven.exited, { code: 0, signal: null });
  raven = start();
  await waitReady(raven);
  await ok(plane.adminRequest('POST', api, { metadata: { name: 'after' }, data: { v: '1' } }));
  await until('the change after the restart arrives', async () =>
    (await byApp('raven')).some((e) => e.name === 'after'),
  );

  const events = await byApp('raven');
  const seen = events.map((e) => `${e.type} ${e.name}`);
  assert.deepEqual(new Set(seen).size, seen.length, `a change arrived twice: ${seen.join(', ')}`);
  assert.deepEqual([...seen].sort(), [
    'added after',
    'added before',
    'added down-1',
    'added down-2',
    'added down-3',
    'deleted down-2',
    'modified down-1',
  ]);
  raven.kill('SIGTERM');
  assert.deepEqual(await raven.exited, { code: 0, signal: null });
});
