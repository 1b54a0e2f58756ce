/**
 * kubectl's habits in `raven get` and `raven watch`, as processes against the real control plane:
 * what they say when nothing is there (kubectl's words, and a watch that waits on), several
 * resources at once (`cm,svc`: a header per kind, `kind/name` names), `--show-labels`, `-L`,
 * `--no-headers`, `--sort-by`, `--output-watch-events` for every output that can carry the event,
 * and the TIME column that says when each change arrived.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { parseAllDocuments } from 'yaml';
import type { ControlPlane } from '../harness/control-plane.js';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';
import { ok, runRaven, startRaven, until, type RavenProcess } from './daemon-process.js';

/** A namespace with ConfigMaps alpha, beta and gamma (labelled, with sizes 9, 10 and 2), a Service web and a Secret creds. */
async function namespaceWith(t: TestContext, plane: ControlPlane): Promise<string> {
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const maps = [
    { name: 'beta', labels: { app: 'db' }, size: '10' },
    { name: 'alpha', labels: { app: 'web', tier: 'front' }, size: '9' },
    { name: 'gamma', labels: { app: 'web' }, size: '2' },
  ];
  for (const { name, labels, size } of maps)
    await ok(
      plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        metadata: { name, labels: { 'habits.test': 'yes', ...labels } },
        data: { size },
      }),
    );
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'web', labels: { 'habits.test': 'yes', app: 'web' } },
      spec: { ports: [{ port: 80 }], selector: { app: 'web' } },
    }),
  );
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/secrets`, {
      metadata: { name: 'creds', labels: { 'habits.test': 'yes', app: 'db' } },
      stringData: { password: 'hunter2' },
    }),
  );
  return ns;
}

/** Lines of stdout, without the trailing empty one. */
function linesOf(stdout: string): string[] {
  const lines = stdout.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

test('raven get takes kubectl’s listing options: several kinds, labels, label columns, no headers, sort order', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceWith(t, plane);
  const sel = ['-n', ns, '-l', 'habits.test=yes'];
  const cases: { args: string[]; lines: RegExp[] }[] = [
    {
      // A table per kind, a blank line between, names as kind/name (kubectl's grouped output).
      args: ['get', 'cm,svc', ...sel],
      lines: [
        /^NAME\s+DATA\s+AGE$/,
        /^configmap\/alpha\s+1\s+\d+s$/,
        /^configmap\/beta\s+1\s+\d+s$/,
        /^configmap\/gamma\s+1\s+\d+s$/,
        /^$/,
        /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$/,
        /^service\/web\s+ClusterIP\s+[\d.]+\s+<none>\s+80\/TCP\s+\d+s$/,
      ],
    },
    {
      // Several kinds asked for, one found: still kind/name, as kubectl prints service/kubernetes
      // for `get pods,svc` in a namespace without pods (and says nothing about the pods).
      args: ['get', 'pods,svc', ...sel],
      lines: [
        /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$/,
        /^service\/web\s+ClusterIP\s+[\d.]+\s+<none>\s+80\/TCP\s+\d+s$/,
      ],
    },
    {
      args: ['get', 'cm,svc', ...sel, '-o', 'name'],
      lines: [/^configmap\/alpha$/, /^configmap\/beta$/, /^configmap\/gamma$/, /^service\/web$/],
    },
    {
      args: ['get', 'cm', ...sel, '--show-labels', '-l', 'app=web'],
      lines: [
        /^NAME\s+DATA\s+AGE\s+LABELS$/,
        /^alpha\s+1\s+\d+s\s+app=web,habits\.test=yes,tier=front$/,
        /^gamma\s+1\s+\d+s\s+app=web,habits\.test=yes$/,
      ],
    },
    {
      // -L repeated or as a comma list; a key the object lacks is an empty cell.
      args: ['get', 'cm', ...sel, '-L', 'app', '-L', 'tier,habits.test'],
      lines: [
        /^NAME\s+DATA\s+AGE\s+APP\s+TIER\s+HABITS\.TEST$/,
        /^alpha\s+1\s+\d+s\s+web\s+front\s+yes$/,
        /^beta\s+1\s+\d+s\s+db\s+yes$/,
        /^gamma\s+1\s+\d+s\s+web\s+yes$/,
      ],
    },
    {
      args: ['get', 'cm,svc', ...sel, '--no-headers'],
      lines: [/^configmap\/alpha\s/, /^configmap\/beta\s/, /^configmap\/gamma\s/, /^service\/web\s/],
    },
    {
      // Natural order of the values: 2, 9, 10.
      args: ['get', 'cm', ...sel, '--sort-by=.data.size', '-o', 'name'],
      lines: [/^configmap\/gamma$/, /^configmap\/alpha$/, /^configmap\/beta$/],
    },
    {
      // db before web; alpha and gamma, both web, keep their name order (the sort is stable).
      args: [
        'get',
        'cm',
        ...sel,
        '--sort-by={.metadata.labels.app}',
        '-o',
        'custom-columns=N:.metadata.name',
      ],
      lines: [/^N$/, /^beta$/, /^alpha$/, /^gamma$/],
    },
    {
      // One table for several kinds, each object redacted as its own kind is.
      args: [
        'get',
        'cm,secret',
        '-n',
        ns,
        '-l',
        'app=db',
        '-o',
        'custom-columns=N:.metadata.name,V:.data.password',
      ],
      lines: [/^N\s+V$/, /^beta\s+<none>$/, /^creds\s+\[redacted\]/],
    },
  ];
  for (const { args, lines } of cases) {
    const run = await runRaven(args, { kubeconfig: plane.kubeconfig });
    const what = `raven ${args.join(' ')}:\n${run.stdout}\n${run.stderr}`;
    assert.equal(run.code, 0, what);
    assert.equal(run.stderr, '', what);
    const got = linesOf(run.stdout);
    assert.equal(got.length, lines.length, what);
    lines.forEach((line, i) => assert.match(got[i] ?? '', line, what));
    assert.ok(!run.stdout.includes(Buffer.from('hunter2').toString('base64')), what);
  }
});

test('raven get says what kubectl says when nothing is found, and exits as it does', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceWith(t, plane);
  const gone = `gone-${randomBytes(4).toString('hex')}`;
  const cases: { args: string[]; code: number; stderr: string }[] = [
    { args: ['get', 'pods', '-n', gone], code: 0, stderr: `No resources found in ${gone} namespace.\n` },
    { args: ['get', 'cm', '-A', '-l', 'habits.test=none'], code: 0, stderr: 'No resources found\n' },
    // A cluster-scoped resource names no namespace.
    { args: ['get', 'namespaces', '-l', 'habits.test=none'], code: 0, stderr: 'No resources found\n' },
    {
      args: ['get', 'pod', 'web-9', '-n', ns],
      code: 1,
      stderr: 'Error from server (NotFound): pods "web-9" not found\n',
    },
    {
      args: ['get', 'deploy', 'web-9', '-n', ns],
      code: 1,
      stderr: 'Error from server (NotFound): deployments.apps "web-9" not found\n',
    },
    {
      args: ['get', 'cm', '-n', ns, '--sort-by=.metadata.nothing'],
      code: 1,
      stderr: 'raven get: couldn\'t find any field with path "{.metadata.nothing}" in the list of objects\n',
    },
  ];
  for (const { args, code, stderr } of cases) {
    const run = await runRaven(args, { kubeconfig: plane.kubeconfig });
    const what = `raven ${args.join(' ')}:\n${run.stdout}\n${run.stderr}`;
    assert.equal(run.code, code, what);
    assert.equal(run.stderr, stderr, what);
    assert.equal(run.stdout, '', what);
  }
  // A named object found for one kind and not the other: printed, the other named, exit 1.
  const some = await runRaven(['get', 'cm,svc', 'web', '-n', ns, '-o', 'name'], {
    kubeconfig: plane.kubeconfig,
  });
  assert.equal(some.code, 1, some.stderr);
  assert.equal(some.stdout, 'service/web');
  assert.equal(some.stderr, 'Error from server (NotFound): configmaps "web" not found\n');

  const usage = await runRaven(['get', 'cm', '-L', 'a b'], { kubeconfig: plane.kubeconfig });
  assert.equal(usage.code, 2, usage.stderr);
  assert.match(usage.stderr, /-L takes label keys, e\.g\. -L app -L tier,version; got "a b"/);
  const path = await runRaven(['get', 'cm', '--sort-by', '{.metadata.name'], {
    kubeconfig: plane.kubeconfig,
  });
  assert.equal(path.code, 2, path.stderr);
  assert.match(path.stderr, /^raven get: --sort-by: /);
});

/** Seconds since midnight UTC of `hh:mm:ss`. */
function secondsOf(clock: string): number {
  const [h, m, s] = clock.split(':').map(Number);
  return (h ?? 0) * 3600 + (m ?? 0) * 60 + (s ?? 0);
}

/** Whether `clock` (UTC, to the second) lies between the two instants, across midnight too. */
function clockBetween(clock: string, before: Date, after: Date): boolean {
  const day = 86_400;
  const from = secondsOf(before.toISOString().slice(11, 19));
  const span = (secondsOf(after.toISOString().slice(11, 19)) - from + day) % day;
  return (secondsOf(clock) - from + day) % day <= span;
}

async function watchUntil(
  t: TestContext,
  raven: RavenProcess,
  what: string,
  seen: () => boolean,
): Promise<void> {
  t.after(() => raven.kill('SIGKILL'));
  await until(what, () => seen() || raven.exitedYet(), {
    show: () => `${raven.stdout.join('\n')}\n${raven.stderr()}`,
  });
  assert.ok(seen(), `${what}:\n${raven.stdout.join('\n')}\n${raven.stderr()}`);
}

async function interrupt(raven: RavenProcess): Promise<void> {
  raven.kill('SIGINT');
  const exit = await raven.exited;
  assert.equal(exit.code, 0, raven.stderr());
}

test('raven watch on nothing says so as kubectl does and keeps watching; a named object is waited for', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceWith(t, plane);
  const later = `later-${randomBytes(4).toString('hex')}`;
  const empty = startRaven(['watch', 'cm', '-n', later], { kubeconfig: plane.kubeconfig });
  const all = startRaven(['watch', 'cm', '-A', '-l', 'habits.test=none'], { kubeconfig: plane.kubeconfig });
  const named = startRaven(['watch', 'cm', 'web-9', '-n', ns], { kubeconfig: plane.kubeconfig });
  await watchUntil(t, empty, 'the note', () => empty.stderr() !== '');
  await watchUntil(t, all, 'the note', () => all.stderr() !== '');
  await watchUntil(t, named, 'the note', () => named.stderr() !== '');
  assert.equal(empty.stderr(), `No resources found in ${later} namespace.\n`);
  assert.equal(all.stderr(), 'No resources found\n');
  assert.equal(
    named.stderr(),
    `raven watch: configmaps "web-9" not found in ${ns} namespace; waiting for it\n`,
  );
  assert.deepEqual([empty.stdout, named.stdout], [[], []], 'nothing on stdout yet');

  // The namespace comes into being: the controller-manager puts kube-root-ca.crt in it.
  await ok(plane.adminRequest('POST', '/api/v1/namespaces', { metadata: { name: later } }));
  t.after(() => deleteNamespace(plane, later));
  await watchUntil(t, empty, 'the ConfigMap of the new namespace', () =>
    empty.stdout.some((l) => /^ADDED\s+\d\d:\d\d:\d\d\s+kube-root-ca\.crt\b/.test(l)),
  );
  assert.match(empty.stdout[0] ?? '', /^EVENT\s+TIME\s+NAME\s+DATA\s+AGE$/);

  const before = new Date();
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: 'web-9' },
      data: { a: '1' },
    }),
  );
  await watchUntil(t, named, 'the object once created', () => named.stdout.some((l) => /^ADDED\s/.test(l)));
  const after = new Date();
  const row = /^ADDED\s+(\d\d:\d\d:\d\d)\s+web-9\s+1\s+\d+s$/.exec(named.stdout[1] ?? '');
  assert.ok(row, named.stdout.join('\n'));
  assert.ok(
    clockBetween(row[1] ?? '', before, after),
    `the TIME ${row[1] ?? ''} is when the change arrived, between ${before.toISOString()} and ${after.toISOString()}`,
  );
  assert.equal(named.stderr().split('\n').length, 2, 'one line about the wait, nothing more');
  await Promise.all([interrupt(empty), interrupt(all), interrupt(named)]);
});

test('raven watch of several kinds prints a header for each kind’s rows, names as kind/name, with label columns', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceWith(t, plane);
  const raven = startRaven(
    ['watch', 'cm,svc', '-n', ns, '-l', 'habits.test=yes', '-L', 'app', '--show-labels'],
    {
      kubeconfig: plane.kubeconfig,
    },
  );
  await watchUntil(
    t,
    raven,
    'all four objects',
    () => raven.stdout.filter((l) => l.startsWith('EXISTING')).length === 4,
  );
  await ok(
    plane.adminRequest('PATCH', `/api/v1/namespaces/${ns}/configmaps/alpha`, { data: { size: '11' } }),
  );
  await watchUntil(t, raven, 'the change', () => raven.stdout.some((l) => l.startsWith('MODIFIED')));
  await ok(
    plane.adminRequest('PATCH', `/api/v1/namespaces/${ns}/services/web`, {
      metadata: { labels: { app: 'web2' } },
    }),
  );
  await watchUntil(t, raven, 'the service change', () =>
    raven.stdout.some((l) => /^MODIFIED\s.*service\/web\b/.test(l)),
  );
  await interrupt(raven);

  // Every row is under its own kind's header (the header is printed again when the kind changes).
  let header = '';
  const rows = raven.stdout.filter((l) => /^[A-Z]/.test(l));
  for (const line of rows) {
    if (line.startsWith('EVENT')) header = line;
    else if (line.includes('configmap/'))
      assert.match(header, /^EVENT\s+TIME\s+NAME\s+DATA\s+AGE\s+APP\s+LABELS$/, raven.stdout.join('\n'));
    else
      assert.match(
        header,
        /^EVENT\s+TIME\s+NAME\s+TYPE\s+CLUSTER-IP\s.*AGE\s+APP\s+LABELS$/,
        raven.stdout.join('\n'),
      );
  }
  const names = rows.filter((l) => !l.startsWith('EVENT')).map((l) => /\s(\S+\/\S+)\s/.exec(l)?.[1]);
  assert.deepEqual(
    names.slice(0, 4).sort(),
    ['configmap/alpha', 'configmap/beta', 'configmap/gamma', 'service/web'],
    raven.stdout.join('\n'),
  );
  assert.ok(
    rows.some((l) =>
      /^MODIFIED\s+\d\d:\d\d:\d\d\s+service\/web\s.*\sweb2\s+app=web2,habits\.test=yes$/.test(l),
    ),
    raven.stdout.join('\n'),
  );
  assert.equal(raven.stderr(), '');
});

test('raven watch --output-watch-events carries kubectl’s event type in every output that can', async (t) => {
  const plane = await sharedCluster();
  const ns = await namespaceWith(t, plane);
  const watch = (output: string[]): RavenProcess =>
    startRaven(['watch', 'cm', 'alpha', '-n', ns, '--output-watch-events', ...output], {
      kubeconfig: plane.kubeconfig,
    });
  const cases: {
    output: string[];
    existing: (lines: string[]) => boolean;
    modified: (lines: string[]) => void;
  }[] = [
    {
      output: ['-o', 'json'],
      existing: (lines) => lines.length >= 1,
      modified: (lines) => {
        const events = lines.map(
          (l) => JSON.parse(l) as { type: string; object: { data: { size: string } } },
        );
        // kubectl's shape exactly: the type and the object, nothing else.
        assert.deepEqual(
          events.map((e) => [Object.keys(e), e.type, e.object.data.size]),
          [
            [['type', 'object'], 'ADDED', '9'],
            [['type', 'object'], 'MODIFIED', '11'],
          ],
        );
      },
    },
    {
      output: ['-o', 'yaml'],
      existing: (lines) => lines.includes('type: ADDED'),
      modified: (lines) => {
        const docs = parseAllDocuments(lines.join('\n')).map((d) => d.toJS() as Record<string, unknown>);
        assert.deepEqual(
          docs.map((d) => [Object.keys(d), d.type]),
          [
            [['object', 'type'], 'ADDED'],
            [['object', 'type'], 'MODIFIED'],
          ],
        );
      },
    },
    {
      output: ['-o', 'jsonpath={.type} {.object.metadata.name} {.object.data.size}'],
      existing: (lines) => lines.length >= 1,
      modified: (lines) => assert.deepEqual(lines, ['ADDED alpha 9', 'MODIFIED alpha 11']),
    },
    {
      // The paths read the event, as kubectl's do: .metadata.name is not in it.
      output: ['-o', 'custom-columns=TYPE:.type,NAME:.object.metadata.name,BARE:.metadata.name'],
      existing: (lines) => lines.length >= 2,
      modified: (lines) =>
        assert.deepEqual(
          lines.map((l) => l.split(/\s+/)),
          [
            ['TYPE', 'NAME', 'BARE'],
            ['ADDED', 'alpha', '<none>'],
            ['MODIFIED', 'alpha', '<none>'],
          ],
        ),
    },
    {
      // kubectl's -o name prints the object's name, event or not.
      output: ['-o', 'name'],
      existing: (lines) => lines.length >= 1,
      modified: (lines) => assert.deepEqual(lines, ['configmap/alpha', 'configmap/alpha']),
    },
    {
      // The table has its EVENT column anyway; --no-headers leaves the rows alone.
      output: ['--no-headers'],
      existing: (lines) => lines.length >= 1,
      modified: (lines) => {
        assert.match(lines[0] ?? '', /^EXISTING\s+alpha\s+1\s+\d+s$/);
        assert.match(lines[1] ?? '', /^MODIFIED\s+\d\d:\d\d:\d\d\s+alpha\s+1\s+\d+s$/);
      },
    },
  ];
  const ravens = cases.map((c) => watch(c.output));
  for (const [i, c] of cases.entries()) {
    const raven = ravens[i] as RavenProcess;
    await watchUntil(t, raven, `${c.output.join(' ')}: the existing object`, () => c.existing(raven.stdout));
  }
  await ok(
    plane.adminRequest('PATCH', `/api/v1/namespaces/${ns}/configmaps/alpha`, { data: { size: '11' } }),
  );
  for (const [i, c] of cases.entries()) {
    const raven = ravens[i] as RavenProcess;
    await watchUntil(
      t,
      raven,
      `${c.output.join(' ')}: the change`,
      () =>
        raven.stdout.some((l) => l.includes('MODIFIED')) ||
        raven.stdout.filter((l) => l === 'configmap/alpha').length === 2,
    );
    await interrupt(raven);
    // YAML as it is; the others without a table's indented diff lines.
    c.modified(
      c.output[1] === 'yaml' ? raven.stdout : raven.stdout.filter((l) => l !== '' && !/^\s/.test(l)),
    );
    assert.equal(raven.stderr(), '', c.output.join(' '));
  }
});
