/**
 * Who made each change, against the real apiserver: one Deployment written by two field managers
 * (`deployer` by server-side apply, `scaler` by a merge patch), by a controller of the test's own
 * on the /status subresource (`auditor`), and by the kube-controller-manager's deployment
 * controller (a real controller updating status). Checked in the library's watcher events (with
 * managedFields dropped from what is kept), in `raven watch -o diff`, `-o json` and `-o yaml` as
 * processes, and in what `raven run` delivers: a file sink's records (`changedBy`), the stdout
 * sink's text format and a Slack sink's message posted to a local receiver (the CLI's words,
 * `spec.replicas: 2 → 3  by scaler (Update) at 10:42:07`).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/client/load-config.js';
import { KubeClient } from '../../src/client/kube-client.js';
import { changedBy, type ChangedBy } from '../../src/watch/changed-by.js';
import { watch } from '../../src/watch/watcher.js';
import type { WatcherEvent } from '../../src/watch/watcher-events.js';
import { diffObjects } from '../../src/raven/model/diff.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { HttpReceiver } from '../harness/http-receiver.js';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';
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

const root = resolve(import.meta.dirname, '..', '..');

/** What `deployer` applies; the second time without replicas, which `scaler` has taken over. */
function manifest(image: string, replicas?: number): unknown {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: {
      ...(replicas === undefined ? {} : { replicas }),
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image }] },
      },
    },
  };
}

interface Written {
  metadata: { managedFields?: { manager: string; time?: string }[] };
}

/** The second (as the apiserver records managedFields times) of `manager`'s last write. */
function writtenAt(answer: Written, manager: string): number {
  const time = answer.metadata.managedFields?.find((e) => e.manager === manager)?.time;
  assert.ok(time !== undefined, `no managedFields time for ${manager}`);
  return Date.parse(time);
}

/**
 * A manager's second write within the same second leaves its managedFields entry as it was (the
 * time has one-second resolution): wait for the clock to pass it, a condition, not a deadline.
 */
async function nextSecond(after: number): Promise<void> {
  while (Date.now() < after + 1000) await delay(50);
}

/** The writes of every test, in order; `seen` waits until the watcher under test shows the object. */
async function drive(plane: ControlPlane, ns: string, seen: () => Promise<void>): Promise<void> {
  const path = `/apis/apps/v1/namespaces/${ns}/deployments`;
  const applied = await ok<Written>(
    plane.adminRequest(
      'PATCH',
      `${path}/web?fieldManager=deployer`,
      manifest('nginx:1.26', 2),
      'application/apply-patch+yaml',
    ),
  );
  await seen();
  await ok(plane.adminRequest('PATCH', `${path}/web?fieldManager=scaler`, { spec: { replicas: 3 } }));
  // The auditor adds a condition to those the deployment controller wrote: on a loaded machine
  // the controller may not have written any yet, and the auditor's would then be the whole list
  // (`status.conditions`, rightly), not one condition of it.
  await until('the deployment controller has written conditions', async () => {
    const current = await ok<{ status?: { conditions?: unknown[] } }>(
      plane.adminRequest('GET', `${path}/web`),
    );
    return (current.status?.conditions?.length ?? 0) > 0;
  });
  await ok(
    plane.adminRequest(
      'PATCH',
      `${path}/web/status?fieldManager=auditor`,
      { status: { conditions: [{ type: 'Audited', status: 'True', reason: 'Checked' }] } },
      'application/strategic-merge-patch+json',
    ),
  );
  await nextSecond(writtenAt(applied, 'deployer'));
  await ok(
    plane.adminRequest(
      'PATCH',
      `${path}/web?fieldManager=deployer`,
      manifest('nginx:1.27'),
      'application/apply-patch+yaml',
    ),
  );
}

const IMAGE = 'spec.template.spec.containers[name=web].image';

/** The attributions a run must show, as `path by manager (operation[ subresource])`. */
const EXPECTED = [
  'spec.replicas by scaler (Update)',
  'status.conditions[type=Audited] by auditor (Update status)',
  `${IMAGE} by deployer (Apply)`,
];

function lines(changes: readonly ChangedBy[]): string[] {
  return changes.flatMap((c) =>
    c.paths.map(
      (p) => `${p} by ${c.manager} (${c.operation}${c.subresource === undefined ? '' : ` ${c.subresource}`})`,
    ),
  );
}

test('the watcher names who made each change, with managedFields dropped from what it keeps', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const client = new KubeClient(await loadConfig({ kubeconfig: plane.kubeconfig }));
  const abort = new AbortController();
  t.after(async () => {
    abort.abort();
    await client.destroy();
  });
  const watcher = watch({
    transport: client,
    path: `/apis/apps/v1/namespaces/${ns}/deployments`,
    dropManagedFields: true,
    fieldManagers: true,
    signal: abort.signal,
  });
  const attributed: string[] = [];
  let added = false;
  let synced = false;
  const consumed = (async () => {
    for await (const event of watcher as AsyncIterable<WatcherEvent>) {
      if (event.type === 'synced') synced = true;
      if (event.type === 'added') added = true;
      if (event.type !== 'modified') continue;
      assert.equal(event.object.metadata?.managedFields, undefined, 'managedFields are dropped');
      assert.ok(event.managers !== undefined, 'the writers of a live change are known');
      const diff = diffObjects(event.previous, event.object);
      attributed.push(
        ...lines(
          changedBy(
            event.managers,
            diff.map((d) => d.path),
            event.object,
          ),
        ),
      );
    }
  })().catch((err: unknown) => {
    if (!abort.signal.aborted) throw err;
  });
  await until('the watcher has listed', () => synced);
  await drive(plane, ns, () => until('the deployment is seen', () => added));
  const show = (): string => attributed.join('\n');
  for (const expected of EXPECTED)
    await until(`"${expected}"`, () => attributed.includes(expected), { show });
  // The deployment controller (kube-controller-manager) writes status of its own.
  await until(
    'a status change by the kube-controller-manager',
    () => attributed.some((a) => /^status\..* by kube-controller-manager \(Update status\)$/.test(a)),
    { show },
  );
  // Nobody else is credited with the replicas or the image.
  assert.deepEqual(
    attributed.filter((a) => a.startsWith('spec.replicas ') || a.startsWith(`${IMAGE} `)),
    ['spec.replicas by scaler (Update)', `${IMAGE} by deployer (Apply)`],
  );
  abort.abort();
  await consumed;
});

interface WatchProcess {
  out: () => string;
  show: () => string;
  /** SIGINT, then the exit status and stderr. */
  stop: () => Promise<{ code: number | null; err: string }>;
}

/** `raven watch deploy -n <ns> -o <output>` as a process. */
function startWatch(t: TestContext, plane: ControlPlane, ns: string, output: string): WatchProcess {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'watch', 'deploy', '-n', ns, '-o', output],
    {
      cwd: root,
      env: { ...process.env, KUBECONFIG: plane.kubeconfig, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const kill = (): boolean => child.kill('SIGKILL');
  process.once('exit', kill);
  t.after(() => {
    process.off('exit', kill);
    kill();
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
  return {
    out: () => out,
    show: () => `stdout:\n${out}\nstderr:\n${err}`,
    stop: async () => {
      child.kill('SIGINT');
      return { code: await exited, err };
    },
  };
}

/** Nothing on stderr but kubectl's note when the list came before the Deployment did. */
function quiet(err: string, ns: string): void {
  assert.ok(err === '' || err === `No resources found in ${ns} namespace.\n`, `stderr: ${err}`);
}

test('raven watch -o diff says who made each change', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const watch = startWatch(t, plane, ns, 'diff');
  const { out, show } = watch;
  await drive(plane, ns, () =>
    until('the deployment is listed or added', () => /\bweb\b/.test(out()), { show }),
  );
  const clock = '\\d\\d:\\d\\d:\\d\\d';
  for (const line of [
    new RegExp(`spec\\.replicas: 2 → 3  by scaler \\(Update\\) at ${clock}$`, 'm'),
    new RegExp(
      `status\\.conditions\\[type=Audited\\]: \\+ .*"Audited".*  by auditor \\(Update status\\) at ${clock}$`,
      'm',
    ),
    new RegExp(
      `containers\\[name=web\\]\\.image: "nginx:1\\.26" → "nginx:1\\.27"  by deployer \\(Apply\\) at ${clock}$`,
      'm',
    ),
    new RegExp(`status\\.\\S+: .*  by kube-controller-manager \\(Update status\\) at ${clock}$`, 'm'),
  ])
    await until(`a line matching ${line.source}`, () => line.test(out()), { show });
  const { code, err } = await watch.stop();
  assert.equal(code, 0, show());
  quiet(err, ns);
});

interface Printed {
  type: string;
  object: { metadata?: { name?: string; managedFields?: unknown } };
  diff?: { path: string }[];
  changedBy?: ChangedBy[];
}

for (const output of ['json', 'yaml'] as const) {
  test(`raven watch -o ${output} carries changedBy on each modification`, async (t) => {
    const plane = await sharedCluster();
    const ns = await freshNamespace(plane);
    t.after(() => deleteNamespace(plane, ns));
    const watch = startWatch(t, plane, ns, output);
    const printed = (): Printed[] =>
      output === 'json'
        ? jsonLines<Printed>(watch.out().split('\n'))
        : parseAllDocuments(watch.out())
            .map((d) => d.toJS() as Printed | null)
            .filter((d): d is Printed => d !== null);
    const attributed = (): string[] => printed().flatMap((p) => lines(p.changedBy ?? []));
    const show = (): string => `${attributed().join('\n')}\n${watch.show()}`;
    await drive(plane, ns, () =>
      until(
        'the deployment is listed or added',
        () => printed().some((p) => p.object.metadata?.name === 'web'),
        {
          show,
        },
      ),
    );
    for (const expected of EXPECTED)
      await until(`"${expected}"`, () => attributed().includes(expected), { show });
    const { code, err } = await watch.stop();
    assert.equal(code, 0, show());
    quiet(err, ns);
    const all = printed();
    const scaled = all.find((p) => p.diff?.some((d) => d.path === 'spec.replicas'));
    const by = scaled?.changedBy?.find((c) => c.manager === 'scaler');
    assert.ok(by !== undefined, show());
    assert.match(by.time ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual(by.paths, ['spec.replicas']);
    // Only modifications carry it.
    assert.ok(
      all.filter((p) => p.type !== 'MODIFIED').every((p) => p.changedBy === undefined),
      show(),
    );
  });
}

interface Record extends DeliveredEvent {
  changedBy?: ChangedBy[];
}

test('raven run writes who made each change into a file sink record', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const dir = await tempDir(t);
  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
checkpoint: { type: memory }
watchers:
  - { name: deployments, resource: deployments.apps, namespaces: [${ns}] }
sinks:
  - { name: archive, type: file, path: ./out/events.jsonl }
routes:
  - { watchers: '*', sinks: [archive] }
`,
  );
  const raven = startRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
  t.after(async () => {
    raven.kill('SIGKILL');
    await raven.exited;
  });
  await waitReady(raven);
  const file = join(dir, 'out', 'events.jsonl');
  const records = async (): Promise<Record[]> => {
    try {
      return jsonLines<Record>((await readFile(file, 'utf8')).split('\n'));
    } catch {
      return [];
    }
  };
  let seen: Record[] = [];
  const show = (): string =>
    seen
      .map((r) => `${r.type} ${JSON.stringify(r.diff.map((d) => d.path))} ${JSON.stringify(r.changedBy)}`)
      .join('\n');
  await drive(plane, ns, () =>
    until(
      'the deployment is delivered',
      async () => (seen = await records()).some((r) => r.type === 'added'),
      { show },
    ),
  );
  const attributed = (): string[] => seen.flatMap((r) => lines(r.changedBy ?? []));
  for (const expected of EXPECTED)
    await until(`"${expected}"`, async () => ((seen = await records()), attributed().includes(expected)), {
      show,
    });
  const scaled = seen.find((r) => r.diff.some((d) => d.path === 'spec.replicas'));
  const by = scaled?.changedBy?.find((c) => c.manager === 'scaler');
  assert.ok(by !== undefined, show());
  assert.match(by.time ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(by.subresource, undefined);
  // The record's object has no managedFields (dropped by default), yet the writers are named.
  assert.equal(scaled?.object.metadata?.managedFields, undefined);
  // Only modifications carry it.
  assert.ok(seen.filter((r) => r.type !== 'modified').every((r) => r.changedBy === undefined));
});

test("raven run's text sinks say who made each change: the stdout text format and a Slack message", async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const slack = await HttpReceiver.start();
  t.after(() => slack.close());
  const dir = await tempDir(t);
  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
checkpoint: { type: memory }
watchers:
  - { name: deployments, resource: deployments.apps, namespaces: [${ns}] }
sinks:
  - { name: console, type: stdout, format: text }
  - { name: slack, type: slack, url: '${slack.url('/hooks/slack')}' }
routes:
  - { watchers: '*', sinks: [console, slack] }
`,
  );
  const raven = startRaven(['run', '-c', config], { kubeconfig: plane.kubeconfig });
  t.after(async () => {
    raven.kill('SIGKILL');
    await raven.exited;
  });
  await waitReady(raven);
  const stdout = (): string => raven.stdout.join('\n');
  /** Each Slack message's diff block, as text. */
  const posted = (): string =>
    slack.requests
      .map((r) => (r.json as { blocks?: { text?: { text?: string } }[] }).blocks?.[1]?.text?.text ?? '')
      .join('\n');
  const show = (): string => `stdout:\n${stdout()}\nslack:\n${posted()}\nstderr:\n${raven.stderr()}`;
  await drive(plane, ns, () =>
    until('the deployment is printed', () => /\badded Deployment \S+\/web\b/.test(stdout()), { show }),
  );
  const clock = '\\d\\d:\\d\\d:\\d\\d';
  const wanted = [
    new RegExp(`^ *spec\\.replicas: 2 → 3  by scaler \\(Update\\) at ${clock}$`, 'm'),
    new RegExp(
      `^ *status\\.conditions\\[type=Audited\\]: \\+ .*  by auditor \\(Update status\\) at ${clock}$`,
      'm',
    ),
    new RegExp(
      `^ *${IMAGE.replace(/[.[\]]/g, '\\$&')}: "nginx:1\\.26" → "nginx:1\\.27"  by deployer \\(Apply\\) at ${clock}$`,
      'm',
    ),
  ];
  for (const line of wanted)
    await until(`stdout: a line matching ${line.source}`, () => line.test(stdout()), { show });
  // Slack posts the spec changes as messages; status-only changes go to its digest (statusOnly: group).
  for (const line of [wanted[0], wanted[2]].filter((l) => l !== undefined))
    await until(`slack: a line matching ${line.source}`, () => line.test(posted()), { show });
});
