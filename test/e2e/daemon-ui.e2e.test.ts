/**
 * The web view served by the daemon: `raven run` as a process with `server.ui` enabled, watching
 * ConfigMaps and Secrets on the real control plane, and its page opened in headless Chromium
 * (Debian's package, driven by playwright-core) at `/ui` on the health server. Objects are
 * created, changed and deleted through the apiserver; the test asserts what the page shows, that
 * the feed needs the token (401 without it), and that a Secret rotated to a value of the same
 * length shows as changed by its fingerprint, never by its value. With
 * RAVEN_UI_DAEMON_SCREENSHOT=FILE it saves a screenshot there (how docs/images/ui-daemon.png is made).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser } from '../harness/browser.js';
import { daemonFixture, ok, startRaven, waitReady, writeConfig } from './daemon-process.js';
import { GIVE_UP_MS, row, rowGone, rowVisible } from './ui-page.js';

const TOKEN = 'ui-token-0123456789abcdef';
const b64 = (value: string): string => Buffer.from(value).toString('base64');

test('raven run serves the web view under /ui: live objects, diffs, deletions, health, and the token enforced', async (t) => {
  const { plane, ns, dir } = await daemonFixture(t);
  const api = `/api/v1/namespaces/${ns}`;
  await ok(
    plane.adminRequest('POST', `${api}/configmaps`, { metadata: { name: 'before' }, data: { a: '1' } }),
  );
  const config = await writeConfig(
    dir,
    `checkpoint: { type: memory }
server: { port: 0, ui: { enabled: true, token: '\${UI_TOKEN}' } }
watchers:
  - { name: configmaps, resource: configmaps, namespaces: [${ns}] }
  - { name: secrets, resource: secrets, namespaces: [${ns}] }
sinks: [{ name: out, type: stdout }]
`,
  );
  const raven = startRaven(['run', '-c', config], {
    kubeconfig: plane.kubeconfig,
    env: { UI_TOKEN: TOKEN, XDG_STATE_HOME: dir },
  });
  t.after(() => raven.kill('SIGKILL'));
  const base = await waitReady(raven);
  const served = await raven.waitForLog('serving the web view');
  assert.equal(served.url, `${base}/ui/`);
  assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/, 'on loopback unless configured');

  // The feed and the health answer only with the token; the page holds no data.
  assert.equal((await fetch(`${base}/ui/events`)).status, 401);
  assert.equal((await fetch(`${base}/ui/api/health`)).status, 401);
  const health = await fetch(`${base}/ui/api/health`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(health.status, 200);
  assert.deepEqual(((await health.json()) as { watcher: string }[]).map((w) => w.watcher).sort(), [
    'configmaps',
    'secrets',
  ]);
  const redirect = await fetch(`${base}/ui`, { redirect: 'manual' });
  assert.equal(redirect.status, 308);
  assert.equal(redirect.headers.get('location'), '/ui/');
  assert.equal((await fetch(`${base}/metrics`)).status, 200, 'the server still serves its own paths');

  const page = await (await launchBrowser(t)).newPage();
  await page.goto(`${base}/ui#token=${TOKEN}`);
  await rowVisible(page, 'before');
  assert.equal(await page.textContent(`${row('before')} td.last`), 'EXISTING');
  await page.waitForSelector('#health tr[data-watcher="configmaps"] td.phase:text-is("watching")', {
    timeout: GIVE_UP_MS,
  });
  assert.equal(await page.textContent('#health tr[data-watcher="configmaps"] td.synced'), 'yes');

  await ok(
    plane.adminRequest('POST', `${api}/configmaps`, { metadata: { name: 'web' }, data: { mode: 'blue' } }),
  );
  await rowVisible(page, 'web');
  assert.equal(await page.textContent(`${row('web')} td.last`), 'ADDED');
  await ok(
    plane.adminRequest('PATCH', `${api}/configmaps/web?fieldManager=ops`, { data: { mode: 'green' } }),
  );
  await page.waitForSelector(`${row('web')} td.last:text-is("MODIFIED")`, { timeout: GIVE_UP_MS });
  assert.equal(
    await page.textContent('#changes .change[data-type="MODIFIED"] pre'),
    'data.mode: "blue" → "green"',
  );
  // Who made it, as the daemon's sinks get it.
  assert.match(
    (await page.textContent('#changes .change[data-type="MODIFIED"] .by')) ?? '',
    /^by ops \(Update\) at \d\d:\d\d:\d\d: data\.mode$/,
  );
  await ok(plane.adminRequest('DELETE', `${api}/configmaps/web`));
  await rowGone(page, 'web');
  await page.waitForSelector('#changes .change[data-type="DELETED"]', { timeout: GIVE_UP_MS });

  // A Secret rotated to a value of the same length: changed, by fingerprint, without the value.
  const [before, after] = ['pw-aaaa-1111', 'pw-bbbb-2222'];
  await ok(
    plane.adminRequest('POST', `${api}/secrets`, {
      metadata: { name: 'db' },
      data: { password: b64(before) },
    }),
  );
  await rowVisible(page, 'db');
  await ok(plane.adminRequest('PATCH', `${api}/secrets/db`, { data: { password: b64(after) } }));
  await page.waitForSelector(`${row('db')} td.last:text-is("MODIFIED")`, { timeout: GIVE_UP_MS });
  const rotation = await page.textContent('#changes .change[data-type="MODIFIED"] pre');
  assert.match(
    rotation ?? '',
    /^data\.password: "\[redacted\] \(16 chars, hmac ([0-9a-f]{12})\)" → "\[redacted\] \(16 chars, hmac (?!\1)[0-9a-f]{12}\)"$/,
  );
  const everything = await page.content();
  for (const value of [before, after, b64(before), b64(after)])
    assert.ok(!everything.includes(value), `the page never holds ${value}`);

  const shot = process.env.RAVEN_UI_DAEMON_SCREENSHOT;
  if (shot !== undefined && shot !== '') {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: shot, fullPage: true });
  }
  raven.kill('SIGTERM');
  assert.equal((await raven.exited).code, 0, 'SIGTERM drains and exits 0');
});
