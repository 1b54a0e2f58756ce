/**
 * The e-mail sink in the daemon against Debian's Exim (test/harness/exim-server.ts), with
 * STARTTLS and AUTH as a submission server asks: down for 30 s while objects change, then the
 * daemon restarts (SIGTERM: SMTP cannot recognise a mail it already has, so a crash may repeat
 * what was unconfirmed, docs/sinks.md); the mails Exim delivered to its maildir, read back and
 * parsed, hold every change exactly once, in order per object (`streaming-sink-outage.ts`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EximServer, readMail } from '../harness/exim-server.js';
import { tempDir, type DeliveredEvent } from './daemon-process.js';
import { outageScenario } from './streaming-sink-outage.js';

/**
 * The change a mail's body shows: the headline gives its type, kind and name, the change id
 * (`watcher:uid:resourceVersion`, or `...:since:deleted`) the rest.
 */
function mailedChange(change: { headline: string; id: string }): DeliveredEvent {
  const [watcher = '', uid = '', resourceVersion = ''] = change.id.split(':');
  const [, type = '', kind = '', key = ''] = change.headline.split(' ');
  const [namespace, name = ''] = key.split('/');
  return {
    id: change.id,
    watcher,
    type: type as DeliveredEvent['type'],
    name,
    ...(namespace === undefined ? {} : { namespace }),
    uid,
    resourceVersion,
    resource: { group: '', version: 'v1', resource: 'configmaps', kind },
  } as DeliveredEvent;
}

test('an SMTP server down for 30 s, then a daemon restart: every change mailed once, in order', async (t) => {
  const server = await EximServer.start();
  t.after(() => server.close());
  const caDir = await tempDir(t);
  await writeFile(join(caDir, 'ca.pem'), server.ca);
  const mails = async (mailbox?: string) => Promise.all((await server.messages(mailbox)).map(readMail));
  await outageScenario(t, 'mail', {
    sink: [
      'type: email',
      'host: 127.0.0.1',
      `port: ${server.port}`,
      `caFile: ${join(caDir, 'ca.pem')}`,
      `username: ${server.username}`,
      `password: ${server.password}`,
      "from: 'Raven <raven@example.org>'",
      'to: [oncall@example.org, audit@example.org]',
      // Long: SMTP cannot recognise a resent mail, so a client timeout after the server took a
      // message (a loaded machine) repeats it; while Exim is down connections are refused at once.
      'timeoutSeconds: 60',
    ].join('\n    '),
    down: () => server.stop(),
    up: () => server.begin(),
    stored: async () => (await mails()).flatMap((m) => m.changes.map(mailedChange)),
    graceful: true,
  });
  const delivered = await mails();
  assert.deepEqual(
    (await mails('audit')).map((m) => m.messageId),
    delivered.map((m) => m.messageId),
    'the second recipient got the same mails',
  );
  const recipients = delivered.map((m) => m.to);
  assert.ok(
    recipients.every((to) => to === 'oncall@example.org, audit@example.org'),
    recipients.join('; '),
  );
  assert.ok(
    delivered.some((m) => m.changes.length > 1 && m.subject.includes(`(+${m.changes.length - 1} more)`)),
    `the backlog after the outage went out as digests: ${delivered.map((m) => m.changes.length).join(' ')}`,
  );
  t.diagnostic(
    `${delivered.length} mails, changes per mail: ${delivered.map((m) => m.changes.length).join(' ')}`,
  );
});
