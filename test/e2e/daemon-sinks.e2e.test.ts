/**
 * `raven run` routes changes of several resources to several sinks, each in its own wire format:
 * a signed webhook, a Slack-format chat channel, a JSON-lines file and stdout. Secret data never
 * leaves the daemon, in any payload, file, stdout line or log line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sharedCluster, freshNamespace, deleteNamespace } from '../harness/test-cluster.js';
import { HttpReceiver, type ReceivedRequest } from '../harness/http-receiver.js';
import {
  jsonLines,
  ok,
  startRaven,
  tempDir,
  until,
  waitReady,
  writeConfig,
  type DeliveredEvent,
} from './daemon-process.js';

const HOOK_SECRET = 'e2e-signing-secret';
/** Values no sink may ever see; each one also checked base64-encoded, as it travels in `data`. */
const PASSWORD = 'tr0ub4dor-e2e-Xq7';
const ROTATED = 'correct-horse-battery-staple-e2e';
const TOKEN = 'stringdata-token-e2e-9fK2';
const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** Not ours: the controller-manager puts this in every namespace. */
const isOurs = (e: DeliveredEvent): boolean => e.name !== 'kube-root-ca.crt';

function verifySignature(request: ReceivedRequest): boolean {
  const timestamp = request.headers['x-raven-timestamp'];
  const signature = request.headers['x-raven-signature'];
  if (typeof timestamp !== 'string' || typeof signature !== 'string') return false;
  const expected = `sha256=${createHmac('sha256', HOOK_SECRET).update(`${timestamp}.${request.raw}`).digest('hex')}`;
  return expected === signature && Math.abs(Date.now() / 1000 - Number(timestamp)) < 300;
}

test('raven run delivers configmaps, deployments, services and secrets to webhook, chat, file and stdout', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const dir = await tempDir(t);
  const hook = await HttpReceiver.start();
  const chat = await HttpReceiver.start();
  t.after(() => hook.close());
  t.after(() => chat.close());

  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
checkpoint: { type: memory }
watchers:
  - { name: configmaps, resource: configmaps, namespaces: [${ns}] }
  - name: deployments
    resource: deployments.apps
    namespaces: [${ns}]
    predicates: { ignoreStatusOnly: true }
  - { name: services, resource: svc, namespaces: [${ns}] }
  - { name: secrets, resource: secrets, namespaces: [${ns}] }
sinks:
  - { name: hook, type: webhook, url: '${hook.url('/events')}', secret: '\${HOOK_SECRET}' }
  - { name: ops, type: slack, url: '${chat.url('/services/T000/B000/XXXX')}' }
  - { name: archive, type: file, path: ./out/events.jsonl }
  - { name: console, type: stdout, format: json }
routes:
  - { watchers: '*', sinks: [hook, archive, console] }
  - { watchers: deployments, sinks: ops }
`,
  );
  const raven = startRaven(['run', '-c', config], {
    kubeconfig: plane.kubeconfig,
    env: { HOOK_SECRET },
  });
  t.after(async () => {
    raven.kill('SIGKILL');
    await raven.exited;
  });
  await waitReady(raven);

  const api = `/api/v1/namespaces/${ns}`;
  const apps = `/apis/apps/v1/namespaces/${ns}`;
  await ok(
    plane.adminRequest('POST', `${api}/configmaps`, { metadata: { name: 'app' }, data: { mode: 'a' } }),
  );
  await ok(plane.adminRequest('PATCH', `${api}/configmaps/app`, { data: { mode: 'b', extra: '<x> & y' } }));
  await ok(
    plane.adminRequest('POST', `${apps}/deployments`, {
      metadata: { name: 'web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
        },
      },
    }),
  );
  await ok(plane.adminRequest('PATCH', `${apps}/deployments/web`, { spec: { replicas: 3 } }));
  await ok(
    plane.adminRequest('POST', `${api}/services`, {
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
    }),
  );
  await ok(plane.adminRequest('DELETE', `${api}/services/web`));
  const lastApplied = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', data: { password: b64(PASSWORD) } });
  await ok(
    plane.adminRequest('POST', `${api}/secrets`, {
      metadata: {
        name: 'db',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied },
      },
      data: { password: b64(PASSWORD) },
      stringData: { token: TOKEN },
    }),
  );
  await ok(plane.adminRequest('PATCH', `${api}/secrets/db`, { data: { password: b64(ROTATED) } }));

  // Everything, in every sink: 2 configmap, 2 deployment, 2 service and 2 secret changes.
  const expected = [
    'configmaps added app',
    'configmaps modified app',
    'deployments added web',
    'deployments modified web',
    'services added web',
    'services deleted web',
    'secrets added db',
    'secrets modified db',
  ];
  const summary = (events: DeliveredEvent[]): string[] =>
    events.filter(isOurs).map((e) => `${e.watcher} ${e.type} ${e.name}`);
  const hookEvents = (): DeliveredEvent[] => hook.requests.map((r) => r.json as DeliveredEvent);
  const fileEvents = async (): Promise<DeliveredEvent[]> =>
    jsonLines((await readFile(join(dir, 'out', 'events.jsonl'), 'utf8').catch(() => '')).split('\n'));
  let archived: DeliveredEvent[] = [];
  await until(
    'every change in every sink',
    async () => {
      archived = await fileEvents();
      return (
        summary(hookEvents()).length >= expected.length &&
        summary(jsonLines(raven.stdout)).length >= expected.length &&
        summary(archived).length >= expected.length &&
        chat.requests.length >= 2
      );
    },
    {
      show: () =>
        `hook: ${summary(hookEvents()).join(', ')}\nstdout: ${raven.stdout.length} lines\n` +
        `file: ${summary(archived).join(', ')}\nchat: ${chat.requests.length}\nlogs:\n${raven.stderr()}`,
    },
  );
  // Let anything extra (a stray status update, a duplicate) arrive before comparing exactly.
  await new Promise((r) => setTimeout(r, 1000));
  archived = await fileEvents();

  // Per object the order is kept in every sink; across objects sinks may interleave.
  const byObject = (lines: string[]): Map<string, string[]> => {
    const out = new Map<string, string[]>();
    for (const line of lines) {
      const [watcher, type, name] = line.split(' ');
      const key = `${watcher ?? ''} ${name ?? ''}`;
      out.set(key, [...(out.get(key) ?? []), type ?? '']);
    }
    return out;
  };
  for (const [sink, events] of [
    ['webhook', hookEvents()],
    ['stdout', jsonLines(raven.stdout)],
    ['file', archived],
  ] as const) {
    assert.deepEqual(
      byObject(summary(events)),
      byObject(expected),
      `${sink}: every change, in order per object`,
    );
    for (const e of events) assert.equal(e.origin, 'live', `${sink}: ${e.id}`);
  }

  // The webhook: POST, signed as docs/sinks.md says, with the event id header.
  for (const request of hook.requests) {
    const event = request.json as DeliveredEvent;
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/events');
    assert.match(String(request.headers['content-type']), /^application\/json/);
    assert.equal(request.headers['x-raven-event-id'], event.id);
    assert.ok(verifySignature(request), `signature of ${event.id} verifies`);
  }
  const find = (events: DeliveredEvent[], watcher: string, type: string): DeliveredEvent => {
    const found = events.find((e) => e.watcher === watcher && e.type === type && isOurs(e));
    assert.ok(found, `${watcher} ${type}`);
    return found;
  };
  // A record's object is the apiserver's own bytes (docs/sinks.md): its escapes of `<`, `>` and
  // `&` are there, in the object and nowhere else (the diff is Raven's JSON).
  const fileText = await readFile(join(dir, 'out', 'events.jsonl'), 'utf8');
  const cmLine = fileText
    .split('\n')
    .find((line) => line.includes('"watcher":"configmaps"') && line.includes('"type":"modified"'));
  assert.ok(cmLine, 'the configmap change is a line of the file');
  assert.match(cmLine, /"object":\{[^\n]*"extra":"\\u003cx\\u003e \\u0026 y"/);
  assert.match(cmLine, /"new":"<x> & y"/);
  for (const events of [hookEvents(), jsonLines(raven.stdout), archived]) {
    const cm = find(events, 'configmaps', 'modified');
    assert.equal(cm.namespace, ns);
    assert.deepEqual(cm.resource, { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' });
    assert.deepEqual(cm.diff, [
      { path: 'data.extra', op: 'add', new: '<x> & y' },
      { path: 'data.mode', op: 'replace', old: 'a', new: 'b' },
    ]);
    assert.equal(cm.object.data?.extra, '<x> & y');
    const deploy = find(events, 'deployments', 'modified');
    assert.deepEqual(deploy.resource, {
      group: 'apps',
      version: 'v1',
      resource: 'deployments',
      kind: 'Deployment',
    });
    assert.deepEqual(
      deploy.diff.filter((d) => d.path === 'spec.replicas'),
      [{ path: 'spec.replicas', op: 'replace', old: 1, new: 3 }],
    );
    const deleted = find(events, 'services', 'deleted');
    assert.equal(deleted.name, 'web');
    assert.equal(deleted.resource.kind, 'Service');
    const secret = find(events, 'secrets', 'modified');
    assert.deepEqual(
      secret.diff.map((d) => d.path),
      ['data.password'],
      'a rotated secret value is reported by its key',
    );
  }

  // The chat sink: Slack's block message for the deployment's changes, with the diff as a code block.
  const messages = chat.requests.map(
    (r) =>
      r.json as {
        text: string;
        blocks: { type: string; text?: { type: string; text: string }; elements?: unknown[] }[];
      },
  );
  for (const r of chat.requests) {
    assert.equal(r.path, '/services/T000/B000/XXXX');
    assert.match(String(r.headers['content-type']), /^application\/json/);
  }
  const added = messages.find((m) => m.text.startsWith('added'));
  assert.ok(added, 'an "added" message');
  assert.equal(added.text, `added Deployment ${ns}/web`);
  const modified = messages.find((m) => m.text.startsWith('modified'));
  assert.ok(modified, `a "modified" message among ${JSON.stringify(messages)}`);
  assert.equal(modified.text, `modified Deployment ${ns}/web`);
  assert.deepEqual(modified.blocks[0], {
    type: 'section',
    text: { type: 'mrkdwn', text: `*modified* Deployment \`${ns}/web\`` },
  });
  const diffBlock = modified.blocks[1];
  assert.equal(diffBlock?.type, 'section');
  assert.ok(diffBlock.text, 'the diff block has text');
  // Followed by who made it when the writer's managedFields entry shows it (it does not when the
  // scale came within the second of the same client's create: the entry's time is to the second).
  assert.match(
    diffBlock.text.text,
    /^```\n(.*\n)*spec\.replicas: 1 → 3( {2}by \S+ \(Update\) at [\d:]+)?\n(.*\n)*```$/,
  );
  assert.equal(modified.blocks.at(-1)?.type, 'context');
  assert.match(JSON.stringify(modified.blocks.at(-1)), /watcher deployments · live · \d{4}-/);
  assert.equal(
    messages.length,
    2,
    `only the deployment is routed to chat, status-only updates filtered: ${messages.map((m) => m.text).join(', ')}`,
  );

  // Secret data: redacted in every payload, file and line, its keys still visible.
  const secretEvent = find(archived, 'secrets', 'added');
  assert.match(String(secretEvent.object.data?.password), /^\[redacted\] \(\d+ chars, hmac [0-9a-f]{12}\)$/);
  assert.match(String(secretEvent.object.data?.token), /^\[redacted\] \(\d+ chars, hmac [0-9a-f]{12}\)$/);
  assert.equal(
    (secretEvent.object.metadata?.annotations as Record<string, string> | undefined)?.[
      'kubectl.kubernetes.io/last-applied-configuration'
    ],
    undefined,
  );
  const everything = [
    ...hook.requests.map((r) => r.raw),
    ...chat.requests.map((r) => r.raw),
    await readFile(join(dir, 'out', 'events.jsonl'), 'utf8'),
    raven.stdout.join('\n'),
    raven.stderr(),
  ].join('\n');
  for (const value of [PASSWORD, ROTATED, TOKEN]) {
    for (const form of [value, b64(value)]) assert.ok(!everything.includes(form), `"${form}" leaked`);
  }

  raven.kill('SIGTERM');
  assert.deepEqual(await raven.exited, { code: 0, signal: null });
});
