/**
 * `raven ui` as a user meets it: the command runs as a process against the real control plane, and
 * its page is opened in a real headless Chromium (Debian's package, driven by playwright-core).
 * ConfigMaps are created, changed and deleted through the apiserver, and the test asserts what the
 * page shows: rows appearing, updating and disappearing, the changes with their diffs, filters,
 * pause/resume, an object's history, the chart's counts, the watchers' health, and the page going
 * on after the apiserver restarts.
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
  assert.deepEqual(history, ['ADDED', 'MODIFIED', 'DELETED']);
  assert.match((await page.textContent('#history-list')) ?? '', /data\.mode: "blue" → "green"/);

  // The chart counts the live changes of the last minute per kind; the existing objects are not
  // changes. (At most the 7 made here and the namespace's kube-root-ca.crt appearing.) The window
  // slides, and a loaded run can take over a minute to get here: one more change, made now, must
  // be counted whatever left the window before it.
  await cm(plane, ns, 'for-the-chart', { z: '1' });
  const legend = '#legend [data-kind="ConfigMap"]';
  await page.waitForFunction(
    `Number(document.querySelector('${legend}')?.getAttribute('data-total') ?? 0) >= 1`,
    undefined,
    { timeout: GIVE_UP_MS },
  );
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
  assert.notEqual(await page.textContent('#notices'), '', 'the outage was shown as a notice');
  assert.equal(await interrupt(raven), 0, 'Ctrl-C exits 0');
});
