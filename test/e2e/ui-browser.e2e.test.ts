/**
 * `raven ui` as a user meets it: the command runs as a process against the real control plane, and
 * its page is opened in a real headless Chromium (Debian's package, driven by playwright-core).
 * ConfigMaps are created, changed and deleted through the apiserver, and the test asserts what the
 * page shows: rows appearing, updating and disappearing, the changes with their diffs, filters,
 * pause/resume, an object's history (opened in view), the chart's counts, the watchers' health,
 * the order of the changes on a page opened late, who made each modification (two field managers),
 * and the page going on after the apiserver restarts, with the outage as two notices.
 *
 * Waits are for conditions on the page; their timeouts are safety nets for a loaded machine,
 * never the verdict. With RAVEN_UI_SCREENSHOT=FILE the first test saves a screenshot there
 * (how docs/images/ui.png is made).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { ControlPlane } from '../harness/control-plane.js';
import { launchBrowser } from '../harness/browser.js';
import { deleteNamespace, freshNamespace, privateCluster, sharedCluster } from '../harness/test-cluster.js';
import { ok, startRaven, until, type RavenProcess } from './daemon-process.js';
import { GIVE_UP_MS, row, rowGone, rowVisible } from './ui-page.js';

async function startUi(
  t: TestContext,
  plane: ControlPlane,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ raven: RavenProcess; url: string }> {
  const raven = startRaven(['ui', ...args, '--port', '0'], { kubeconfig: plane.kubeconfig, env });
  t.after(() => raven.kill('SIGKILL'));
  let url: string | undefined;
  await until(
    'raven ui prints its address',
    () => {
      url = /serving (http:\/\/\S+\/)/.exec(raven.stdout.join('\n'))?.[1];
      return url !== undefined || raven.exitedYet();
    },
    { show: () => raven.stderr() },
  );
  assert.ok(url, `raven ui exited before serving:\n${raven.stderr()}`);
  return { raven, url };
}

async function cm(
  plane: ControlPlane,
  ns: string,
  name: string,
  data: Record<string, string>,
): Promise<void> {
  await ok(plane.adminRequest('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name }, data }));
}

async function attributes(page: Page, selector: string, name: string): Promise<(string | null)[]> {
  return Promise.all((await page.locator(selector).all()).map((node) => node.getAttribute(name)));
}

async function interrupt(raven: RavenProcess): Promise<number | null> {
  raven.kill('SIGTERM');
  return (await raven.exited).code;
}

test('the page shows objects appear, change with their diffs and disappear, live, and filters, pauses and shows history', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`);
  await cm(plane, ns, 'before', { 'app.conf': `${lines.join('\n')}\n` });
  const { raven, url } = await startUi(t, plane, ['configmaps', '-n', ns], { RAVEN_UI_TOKEN: 's3cret' });

  // Without the token, the feed is refused; the page itself holds no data.
  assert.equal((await fetch(`${url}events`)).status, 401);
  assert.equal((await fetch(`${url}api/health`)).status, 401);
  const page = await (await launchBrowser(t)).newPage();
  await page.goto(`${url}#token=s3cret`);

  // The object that exists, then the watcher's health.
  await rowVisible(page, 'before');
  assert.equal(await page.textContent(`${row('before')} td.last`), 'EXISTING');
  await page.waitForSelector('#health tr[data-watcher="configmaps"] td.phase:text-is("watching")', {
    timeout: GIVE_UP_MS,
  });
  assert.equal(await page.textContent('#health tr[data-watcher="configmaps"] td.synced'), 'yes');
  assert.equal(await page.getAttribute('#conn', 'data-state'), 'live');

  // Added: a row appears, and an ADDED line in the changes.
  await cm(plane, ns, 'web', { mode: 'blue' });
  await rowVisible(page, 'web');
  assert.equal(await page.textContent(`${row('web')} td.last`), 'ADDED');

  // Modified: the row says so, and the change shows the field diff.
  await ok(
    plane.adminRequest('PATCH', `/api/v1/namespaces/${ns}/configmaps/web`, { data: { mode: 'green' } }),
  );
  await page.waitForSelector(`${row('web')} td.last:text-is("MODIFIED")`, { timeout: GIVE_UP_MS });
  const modified = await page.textContent('#changes .change[data-type="MODIFIED"] pre');
  assert.equal(modified, 'data.mode: "blue" → "green"');

  // A change on line 21 of a 40-line value shows as a line diff around that line.
  lines[20] = 'line 21 changed';
  await ok(
    plane.adminRequest('PATCH', `/api/v1/namespaces/${ns}/configmaps/before`, {
      data: { 'app.conf': `${lines.join('\n')}\n` },
    }),
  );
  await page.waitForSelector(`${row('before')} td.last:text-is("MODIFIED")`, { timeout: GIVE_UP_MS });
  const lineDiff = (await page.textContent('#changes .change[data-type="MODIFIED"] pre')) ?? '';
  assert.match(lineDiff, /@@ -18,7 \+18,7 @@/);
  assert.match(lineDiff, /^\s*-line 21$/m);
  assert.match(lineDiff, /^\s*\+line 21 changed$/m);

  // Deleted: the row goes, a DELETED line stays in the changes.
  await ok(plane.adminRequest('DELETE', `/api/v1/namespaces/${ns}/configmaps/web`));
  await rowGone(page, 'web');
  await page.waitForSelector('#changes .change[data-type="DELETED"]', { timeout: GIVE_UP_MS });

  // Filters: by text, by namespace pattern, by event type.
  await cm(plane, ns, 'other', { x: '1' });
  await rowVisible(page, 'other');
  await page.fill('#text', 'other');
  assert.equal(await page.isHidden(row('before')), true, 'the text filter hides what does not match');
  assert.equal(await page.isVisible(row('other')), true);
  await page.fill('#text', '');
  await page.fill('#ns', `!${ns}`);
  assert.equal(await page.isHidden(row('other')), true, 'a negated namespace pattern hides the namespace');
  await page.fill('#ns', `${ns.slice(0, 3)}*`);
  assert.equal(await page.isVisible(row('other')), true, 'a matching namespace pattern shows it');
  await page.fill('#ns', '');
  await page.selectOption('#type', 'DELETED');
  const shownTypes = await attributes(page, '#changes .change:not([hidden])', 'data-type');
  assert.deepEqual([...new Set(shownTypes)], ['DELETED'], 'the event filter shows only deletions');
  await page.selectOption('#type', '');

  // Pause: a change made while paused is counted, not shown; resume shows it.
  await page.click('#pause');
  assert.equal(await page.textContent('#conn'), 'paused');
  await cm(plane, ns, 'while-paused', { y: '2' });
  await page.waitForSelector('#pause:text-is("Resume (1 new)")', { timeout: GIVE_UP_MS });
  assert.equal(await page.$(row('while-paused')), null, 'nothing is shown while paused');
  await page.click('#pause');
  await rowVisible(page, 'while-paused');

  // History: clicking a deleted object's change shows everything that happened to it.
  await page.click('#changes .change[data-type="DELETED"]');
  await page.waitForSelector('#history:not([hidden])', { timeout: GIVE_UP_MS });
  const history = await attributes(page, '#history-list li', 'data-type');
  assert.deepEqual(history, ['DELETED', 'MODIFIED', 'ADDED'], 'newest first');
  assert.match((await page.textContent('#history-list')) ?? '', /data\.mode: "blue" → "green"/);

  // The chart counts the live changes of the last minute per kind; the existing objects are not
  // changes. (At most the 7 made here and the namespace's kube-root-ca.crt appearing.) The window
  // slides, and a loaded run can take over a minute to get here: one more change, made now, must
  // be counted whatever left the window before it.
  await cm(plane, ns, 'for-the-chart', { z: '1' });
  const legend = '#legend [data-kind="ConfigMap"]';
  // Polled from here: a string predicate of waitForFunction is evaluated inside the page, where
  // the view's Content-Security-Policy rightly forbids eval (it failed whenever the first look
  // did not already find the count).
  await until('the chart counts a ConfigMap change', async () => {
    const counted = await page.getAttribute(legend, 'data-total').catch(() => null);
    return Number(counted ?? 0) >= 1;
  });
  const total = Number(await page.getAttribute(legend, 'data-total'));
  assert.ok(total >= 1 && total <= 8, `changes counted in the chart: ${total}`);

  const shot = process.env.RAVEN_UI_SCREENSHOT;
  if (shot !== undefined && shot !== '') {
    await page.click('#history-close');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: shot, fullPage: true });
  }
  assert.equal(await interrupt(raven), 0, 'Ctrl-C exits 0');
});

test('the page keeps showing changes after the apiserver restarts, and the watcher health counts the reconnect', async (t) => {
  const plane = await privateCluster();
  t.after(() => plane.stop());
  const ns = await freshNamespace(plane);
  await cm(plane, ns, 'before', { a: '1' });
  const { raven, url } = await startUi(t, plane, ['configmaps', '-n', ns]);
  const page = await (await launchBrowser(t)).newPage();
  await page.goto(url);
  await rowVisible(page, 'before');
  await page.waitForSelector('#health tr[data-watcher="configmaps"] td.phase:text-is("watching")', {
    timeout: GIVE_UP_MS,
  });

  await plane.restartApiserver({ downMs: 5_000 });
  assert.equal(raven.exitedYet(), false, `raven ui exited during the restart:\n${raven.stderr()}`);
  await cm(plane, ns, 'after', { b: '2' });
  await rowVisible(page, 'after');
  assert.equal(await page.textContent(`${row('after')} td.last`), 'ADDED');
  assert.equal(await page.isVisible(row('before')), true, 'the existing row is still there');
  const counted = async (): Promise<number> =>
    Number(await page.textContent('#health tr[data-watcher="configmaps"] td.reconnects')) +
    Number(await page.textContent('#health tr[data-watcher="configmaps"] td.relists'));
  await until('the health table counts the reconnect', async () => (await counted()) >= 1);
  // The outage is a few notices, its start and its end, not one per retry.
  // (A reminder every 30 s while it lasts: a loaded machine can take that long to restart it.)
  await page.waitForSelector('#notices [data-outage="healed"]', { timeout: GIVE_UP_MS });
  const notices = (await attributes(page, '#notices > div', 'data-outage')).join(' ');
  assert.match(notices, /^healed (ongoing )*started$/, 'newest first: the heal, reminders, the start');
  assert.match(
    (await page.textContent('#notices [data-outage="healed"]')) ?? '',
    /configmaps: .*reconnected after \d+ s/,
  );
  assert.equal(await interrupt(raven), 0, 'Ctrl-C exits 0');
});

/** The changes listed on the page, top to bottom: their number and `TYPE namespace/name`. */
async function listedChanges(page: Page): Promise<{ seq: number; text: string }[]> {
  // "TYPE Kind namespace/name time…": the type and the object.
  return page.evaluate<
    { seq: number; text: string }[]
  >(`[...document.querySelectorAll('#changes .change')].map((n) => ({
    seq: Number(n.dataset.seq),
    text: n.dataset.type + ' ' + (n.textContent || '').split(' ')[2],
  }))`);
}

test('a page opened late lists the changes newest first by their number, live ones above, and an object’s history opens in view', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const { raven, url } = await startUi(t, plane, ['configmaps', '-n', ns]);
  await until('the watch has listed', async () => {
    const health = (await (await fetch(`${url}api/health`)).json()) as { synced: boolean }[];
    return health.length > 0 && health.every((h) => h.synced);
  });
  // Changes made before any page is open: a, b, c added, a changed, objects added, c changed.
  for (const name of ['a', 'b', 'c']) await cm(plane, ns, name, { v: '1' });
  await ok(plane.adminRequest('PATCH', `/api/v1/namespaces/${ns}/configmaps/a`, { data: { v: '2' } }));
  // Enough objects for a page taller than the window.
  for (let i = 0; i < 12; i++) await cm(plane, ns, `filler-${String(i).padStart(2, '0')}`, { v: '1' });
  await ok(plane.adminRequest('PATCH', `/api/v1/namespaces/${ns}/configmaps/c`, { data: { v: '2' } }));

  const page = await (await launchBrowser(t)).newPage();
  await page.setViewportSize({ width: 1100, height: 360 });
  await page.goto(url);
  await page.waitForSelector('#changes .change[data-type="MODIFIED"]:has-text("/c")', {
    timeout: GIVE_UP_MS,
  });
  await rowVisible(page, 'filler-11');
  // (The namespace's kube-root-ca.crt, made with it, is the oldest line: left out.)
  const late = (await listedChanges(page)).filter((c) => !c.text.endsWith('/kube-root-ca.crt'));
  const seqs = late.map((c) => c.seq);
  assert.deepEqual(
    seqs,
    [...seqs].sort((x, y) => y - x),
    `newest first: ${late.map((c) => c.text).join(', ')}`,
  );
  assert.match(late[0]?.text ?? '', new RegExp(`^MODIFIED ${ns}/c$`), 'the last change on top');
  assert.match(late[1]?.text ?? '', /filler-11$/);
  assert.match(late.at(-1)?.text ?? '', /\/b$/, 'b, added and never changed, is the oldest line');

  // A live change goes above the backlog.
  await ok(plane.adminRequest('PATCH', `/api/v1/namespaces/${ns}/configmaps/b`, { data: { v: '2' } }));
  await page.waitForSelector('#changes .change[data-type="MODIFIED"]:has-text("/b")', {
    timeout: GIVE_UP_MS,
  });
  const live = await listedChanges(page);
  assert.match(live[0]?.text ?? '', new RegExp(`^MODIFIED ${ns}/b$`));
  assert.ok((live[0]?.seq ?? 0) > (live[1]?.seq ?? Infinity));

  // History: clicked far down the page, it opens in the window, newest first.
  assert.ok(
    await page.evaluate('document.documentElement.scrollHeight > window.innerHeight'),
    'the page is taller than the window',
  );
  await page.click(row('b'));
  await page.waitForSelector('#history:not([hidden])', { timeout: GIVE_UP_MS });
  const inView = await page.evaluate(`(() => {
    const r = document.getElementById('history-list').getBoundingClientRect();
    return r.top >= 0 && r.top < window.innerHeight && r.height > 0;
  })()`);
  assert.ok(inView, 'the history is in the window');
  assert.deepEqual(await attributes(page, '#history-list li', 'data-type'), ['MODIFIED', 'ADDED']);
  assert.equal(await interrupt(raven), 0);
});

test('each modification on the page says which field manager made it, with the operation and time', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane);
  t.after(() => deleteNamespace(plane, ns));
  const { raven, url } = await startUi(t, plane, ['configmaps', '-n', ns]);
  const page = await (await launchBrowser(t)).newPage();
  await page.goto(url);
  await page.waitForSelector('#health tr[data-watcher="configmaps"] td.synced:text-is("yes")', {
    timeout: GIVE_UP_MS,
  });
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  await ok(
    plane.adminRequest('POST', `${path}?fieldManager=alpha`, {
      metadata: { name: 'shared' },
      data: { a: '1' },
    }),
  );
  // Server-side apply by a second manager, then an update by the first.
  await ok(
    plane.adminRequest(
      'PATCH',
      `${path}/shared?fieldManager=beta`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared' }, data: { b: '2' } },
      'application/apply-patch+yaml',
    ),
  );
  await page.waitForSelector('#changes .change[data-type="MODIFIED"] .by', { timeout: GIVE_UP_MS });
  await ok(plane.adminRequest('PATCH', `${path}/shared?fieldManager=alpha`, { data: { c: '3' } }));
  await until(
    'both modifications listed',
    async () => (await page.locator('#changes .change[data-type="MODIFIED"]').count()) === 2,
  );
  const modified = await page.evaluate<
    { diff: string; by: string[] }[]
  >(`[...document.querySelectorAll('#changes .change[data-type="MODIFIED"]')].map((n) => ({
    diff: n.querySelector('pre')?.textContent ?? '',
    by: [...n.querySelectorAll('.by')].map((b) => b.textContent),
  }))`);
  assert.deepEqual(
    modified.map((m) => m.diff),
    ['data.c: + "3"', 'data.b: + "2"'],
  );
  const clock = '\\d\\d:\\d\\d:\\d\\d';
  assert.deepEqual(
    modified.map((m) => m.by.length),
    [1, 1],
    JSON.stringify(modified),
  );
  assert.match(modified[0]?.by[0] ?? '', new RegExp(`^by alpha \\(Update\\) at ${clock}: data\\.c$`));
  assert.match(modified[1]?.by[0] ?? '', new RegExp(`^by beta \\(Apply\\) at ${clock}: data\\.b$`));
  // The history shows the same.
  await page.click(row('shared'));
  await page.waitForSelector('#history:not([hidden])', { timeout: GIVE_UP_MS });
  assert.match((await page.textContent('#history-list')) ?? '', /by alpha \(Update\) at .*: data\.c/);
  assert.equal(await interrupt(raven), 0);
});
