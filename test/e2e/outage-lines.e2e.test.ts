/**
 * What an apiserver outage looks like from the outside, as processes: `raven watch` (one watch of
 * all namespaces, and one watch per namespace of three) and `raven run` (watchers over one and
 * over three namespaces) while the apiserver is stopped for 20 s and started again. Each says so
 * in a few lines (one when it starts, one every 30 s, one when it heals: at most 6 for this
 * outage, whatever the retries or the namespaces), none carries a request URL, the heal line says
 * how the watch came back, and changes made afterwards are printed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freshNamespace, privateCluster } from '../harness/test-cluster.js';
import {
  ok,
  startRaven,
  tempDir,
  until,
  waitReady,
  writeConfig,
  type LogLine,
  type RavenProcess,
} from './daemon-process.js';

/** How long the apiserver stays stopped (it then needs a few seconds more to answer again). */
const DOWN_MS = 20_000;
/** The goal for an outage of about 20 s: a start line, maybe one "still failing", a heal line, and room. */
const MAX_LINES = 6;
/** Safety net for waits across the restart: an apiserver starting on a loaded machine is slow. Never the verdict. */
const PATIENT_MS = 300_000;

function nonEmpty(text: string): string[] {
  return text.split('\n').filter((l) => l.trim() !== '');
}

async function waitForRow(raven: RavenProcess, what: string, pattern: RegExp): Promise<void> {
  await until(what, () => raven.stdout.some((l) => pattern.test(l)) || raven.exitedYet(), {
    timeoutMs: PATIENT_MS,
    show: () => `stdout:\n${raven.stdout.join('\n')}\nstderr:\n${raven.stderr()}`,
  });
  assert.ok(
    raven.stdout.some((l) => pattern.test(l)),
    `exited before ${what}:\n${raven.stderr()}`,
  );
}

/** The daemon's log lines that are about watching (the outage's, or a watch failure's), per watcher. */
function outageLogs(raven: RavenProcess): Map<string, LogLine[]> {
  const by = new Map<string, LogLine[]>();
  for (const line of raven.logs) {
    if (line.outage === undefined && !/watch failed/.test(line.msg)) continue;
    const watcher = typeof line.watcher === 'string' ? line.watcher : '?';
    by.set(watcher, [...(by.get(watcher) ?? []), line]);
  }
  return by;
}

test('through an apiserver stopped for 20 s raven watch and raven run each say it in at most 6 lines, say it healed, and print the changes after it', async (t) => {
  const plane = await privateCluster();
  t.after(() => plane.stop());
  const namespaces = [await freshNamespace(plane), await freshNamespace(plane), await freshNamespace(plane)];
  const [first, second] = namespaces as [string, string, string];
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${first}/configmaps`, { metadata: { name: 'before' } }),
  );
  const env = { kubeconfig: plane.kubeconfig };
  const all = startRaven(['watch', 'configmaps', '-A'], env);
  const several = startRaven(['watch', 'configmaps', ...namespaces.flatMap((n) => ['-n', n])], env);
  const dir = await tempDir(t);
  const config = await writeConfig(
    dir,
    `
server: { port: 0 }
checkpoint: { type: memory }
watchers:
  - { name: configmaps, resource: configmaps, namespaces: [${namespaces.join(', ')}] }
  - { name: secrets, resource: secrets, namespaces: [${first}] }
sinks:
  - { name: console, type: stdout, format: json }
`,
  );
  const daemon = startRaven(['run', '-c', config], env);
  const processes = [all, several, daemon];
  t.after(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
  });
  await waitForRow(all, 'raven watch -A lists the ConfigMap', /^EXISTING\s+\S+\s+before\b/);
  await waitForRow(several, 'raven watch -n ×3 lists the ConfigMap', /^EXISTING\s+\S+\s+before\b/);
  await waitReady(daemon);
  await daemon.waitForLog('synced', 2, PATIENT_MS);

  const stoppedAt = Date.now();
  await plane.restartApiserver({ downMs: DOWN_MS });
  const answeringAfter = Date.now() - stoppedAt;
  for (const p of processes) assert.equal(p.exitedYet(), false, `exited during the outage:\n${p.stderr()}`);

  // A change while the watches recover: printed once they are back.
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${second}/configmaps`, { metadata: { name: 'during' } }),
  );
  await waitForRow(all, 'raven watch -A prints the change', /^ADDED\s+\d\d:\d\d:\d\d\s+\S+\s+during\b/);
  await waitForRow(
    several,
    'raven watch -n ×3 prints the change',
    /^ADDED\s+\d\d:\d\d:\d\d\s+\S+\s+during\b/,
  );
  await waitForRow(daemon, 'raven run delivers the change', /"name":"during"/);
  // Resumed (nothing missed), or relisted: an apiserver that restarts starts its watch cache
  // afresh, so the last resourceVersion may be gone, and the line says what a relist cannot see.
  const healed =
    /reconnected after \d+ s; .*(resumed from .*; nothing missed|relisted \(.*had expired\): .*(no object changed; only an object both created and deleted meanwhile could have gone unseen|found, each object's latest state; .*were not seen))$/m;
  for (const [name, p] of [
    ['raven watch -A', all],
    ['raven watch -n ×3', several],
  ] as const) {
    await until(`${name} says the outage healed`, () => healed.test(p.stderr()), {
      timeoutMs: PATIENT_MS,
      show: () => p.stderr(),
    });
  }
  await until(
    'raven run says each watcher healed',
    () =>
      ['configmaps', 'secrets'].every((w) =>
        outageLogs(daemon)
          .get(w)
          ?.some((l) => healed.test(l.msg)),
      ),
    { timeoutMs: PATIENT_MS, show: () => daemon.stderr() },
  );

  // And a change after the heal.
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${first}/configmaps`, { metadata: { name: 'after' } }),
  );
  await waitForRow(
    all,
    'raven watch -A prints the change after the heal',
    /^ADDED\s+\d\d:\d\d:\d\d\s+\S+\s+after\b/,
  );
  await waitForRow(
    several,
    'raven watch -n ×3 prints the change after the heal',
    /^ADDED\s+\d\d:\d\d:\d\d\s+\S+\s+after\b/,
  );
  await waitForRow(daemon, 'raven run delivers the change after the heal', /"name":"after"/);

  const cliLines = { all: nonEmpty(all.stderr()), several: nonEmpty(several.stderr()) };
  const daemonLines = outageLogs(daemon);
  const gapLines = daemon.logs.filter((l) => l.msg.startsWith('gap:')).length;
  t.diagnostic(
    `apiserver answering again ${(answeringAfter / 1000).toFixed(0)} s after it was stopped; ` +
      `stderr lines: raven watch -A ${cliLines.all.length}, raven watch -n ×3 ${cliLines.several.length}; ` +
      `raven run outage log lines: ${[...daemonLines].map(([w, l]) => `${w} ${l.length}`).join(', ')} ` +
      `(and ${gapLines} gap notices)\n` +
      [...cliLines.all, ...cliLines.several, ...[...daemonLines.values()].flat().map((l) => l.msg)].join(
        '\n',
      ),
  );
  for (const [name, lines] of Object.entries(cliLines)) {
    assert.ok(lines.length <= MAX_LINES, `${name}: ${lines.length} lines:\n${lines.join('\n')}`);
    assert.match(
      lines[0] ?? '',
      /^raven watch: configmaps.*: cannot reach 127\.0\.0\.1:\d+ \(.+\); retrying$/,
    );
    assert.match(lines.at(-1) ?? '', /^raven watch: configmaps.*: reconnected after \d+ s; /);
    assert.match(lines.at(-1) ?? '', healed);
    for (const line of lines) assert.doesNotMatch(line, /\/api\/v1|watch=/, 'no request URL');
  }
  assert.match(
    cliLines.several.at(-1) ?? '',
    /^raven watch: configmaps in 3 namespaces: reconnected after \d+ s; \d watch(es)? (resumed|relisted)/,
    'one line for the three watches',
  );
  for (const watcher of ['configmaps', 'secrets']) {
    const lines = (daemonLines.get(watcher) ?? []).map((l) => l.msg);
    assert.ok(lines.length <= MAX_LINES, `${watcher}: ${lines.length} log lines:\n${lines.join('\n')}`);
    assert.match(lines.at(-1) ?? '', healed, lines.join('\n'));
  }
  // Gap notices after a relist are another matter (whether one is due is decided elsewhere).
  const warnings = daemon.logs.filter(
    (l) => l.level >= 40 && l.outage === undefined && !l.msg.startsWith('gap:'),
  );
  assert.deepEqual(
    warnings.map((l) => l.msg),
    [],
    'nothing else warns about the outage',
  );
});

test('raven watch says it cannot reach a cluster restarted on a new port, follows the kubeconfig to it, and waits there, saying so once, until the server answers', async (t) => {
  const plane = await privateCluster();
  t.after(() => plane.stop());
  const ns = await freshNamespace(plane);
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'before' } }),
  );
  const oldPort = plane.state.ports.apiserver;
  const raven = startRaven(['watch', 'configmaps', '-n', ns], { kubeconfig: plane.kubeconfig });
  t.after(async () => {
    raven.kill('SIGKILL');
    await raven.exited;
  });
  await waitForRow(raven, 'the ConfigMap is listed', /^EXISTING\s+before\b/);

  // Down for a while on the old port first, so the refusals are seen, then up on a new one that
  // the kubeconfig names 12 s before the apiserver listens there (a local cluster that rewrites
  // its kubeconfig first): raven watch follows it while it still refuses, and waits.
  const newPort = await plane.moveApiserver({ downMs: 8_000, kubeconfigAheadMs: 12_000 });
  const moved = new RegExp(
    `^raven watch: the kubeconfig now names https://127\\.0\\.0\\.1:${newPort} for this context \\(was https://127\\.0\\.0\\.1:${oldPort}\\); watching there$`,
    'm',
  );
  await until(
    'raven watch follows the kubeconfig to the new port',
    () => moved.test(raven.stderr()) || raven.exitedYet(),
    {
      timeoutMs: PATIENT_MS,
      show: () => raven.stderr(),
    },
  );
  assert.match(raven.stderr(), moved);
  // The line is printed when the new address is taken, before the list from it: wait for the
  // second listing, or a ConfigMap made meanwhile is (rightly) listed as EXISTING, not ADDED.
  await until(
    'the objects are listed again from the new address',
    () => raven.stdout.filter((l) => /^EXISTING\s+before\b/.test(l)).length >= 2 || raven.exitedYet(),
    { timeoutMs: PATIENT_MS, show: () => `stdout:\n${raven.stdout.join('\n')}\nstderr:\n${raven.stderr()}` },
  );
  await ok(
    plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'after' } }),
  );
  await waitForRow(raven, 'the ConfigMap created on the moved cluster', /^ADDED\s+\d\d:\d\d:\d\d\s+after\b/);

  const lines = nonEmpty(raven.stderr());
  t.diagnostic(`stderr: ${lines.length} lines:\n${lines.join('\n')}`);
  assert.match(
    lines[0] ?? '',
    new RegExp(`^raven watch: configmaps: cannot reach 127\\.0\\.0\\.1:${oldPort} \\(.+\\); retrying$`),
  );
  assert.ok(lines.length <= MAX_LINES, lines.join('\n'));
  const notYet = new RegExp(
    `^raven watch: https://127\\.0\\.0\\.1:${newPort} does not answer yet \\(.*ECONNREFUSED.*\\); retrying$`,
  );
  assert.equal(lines.filter((l) => notYet.test(l)).length, 1, lines.join('\n'));
  assert.equal(
    raven.stdout.filter((l) => /^EXISTING\s+before\b/.test(l)).length,
    2,
    'the objects are listed again from the new address',
  );
});
