import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { GapNotice } from '../../../../src/raven/model/gap-notice.js';
import { emailMessage } from '../../../../src/raven/sinks/email-message.js';
import { ATTRIBUTED_LINES, attributedEvent, manyChanges, sampleEvent } from './fixtures.js';

test('one change: the subject is the template on the change, the body its headline, diff and id', () => {
  const event = sampleEvent({ name: 'web' });
  const mail = emailMessage([event], { domain: 'example.org' });
  assert.equal(mail.subject, '[raven] modified Deployment default/web');
  assert.equal(
    mail.text,
    `${event.time} modified Deployment default/web\n    spec.replicas: 2 → 3\n    change id: ${event.id}\n`,
  );
  assert.match(mail.messageId, /^<raven\.[0-9a-f]{32}@example\.org>$/);
});

test('several changes make one digest, in the order given, with the count in the subject', () => {
  const events = ['a', 'b', 'c'].map((name) => sampleEvent({ name }));
  const mail = emailMessage(events, { domain: 'example.org', subject: '{{type}} {{name}}' });
  assert.equal(mail.subject, 'modified a (+2 more)');
  assert.ok(mail.text.startsWith('3 changes, oldest first.\n\n'));
  const ids = [...mail.text.matchAll(/change id: (\S+)/g)].map((m) => m[1]);
  assert.deepEqual(
    ids,
    events.map((e) => e.id),
  );
});

test('the same changes get the same Message-ID, other changes another', () => {
  const events = ['a', 'b'].map((name) => sampleEvent({ name }));
  const id = (list: typeof events) => emailMessage(list, { domain: 'x.test' }).messageId;
  assert.equal(id(events), id(events.map((e) => ({ ...e }))));
  assert.notEqual(id(events), id([...events].reverse()));
  assert.notEqual(id(events), id(events.slice(0, 1)));
});

test('a long diff is cut to maxDiffLines with how many were left out', () => {
  const mail = emailMessage([sampleEvent({ diff: manyChanges(10) })], { domain: 'x.test', maxDiffLines: 3 });
  const lines = mail.text.split('\n');
  assert.equal(lines.filter((l) => l.startsWith('    data.k')).length, 3);
  assert.ok(lines.includes('    … and 7 more'), mail.text);
});

test('a subject template rendering several lines becomes one header line', () => {
  const mail = emailMessage([sampleEvent()], { domain: 'x.test', subject: '{{name}}\n{{diff}}' });
  assert.equal(mail.subject, 'web spec.replicas: 2 → 3');
});

test('a gap notice names the watcher and reason', () => {
  const gap: GapNotice = {
    id: 'gap:1',
    type: 'gap',
    watcher: 'deploys',
    resource: sampleEvent().resource,
    namespace: undefined,
    reason: 'resume-expired',
    fromResourceVersion: '40',
    toResourceVersion: '44',
    since: undefined,
    message: 'changes between two resourceVersions may be missing',
    time: '2024-05-01T12:00:00.000Z',
  };
  const mail = emailMessage([gap], { domain: 'x.test' });
  assert.equal(mail.subject, '[raven] gap Deployment watcher deploys');
  assert.match(
    mail.text,
    /gap Deployment watcher deploys \(resume-expired\)\n {4}changes between .*\n {4}change id: gap:1\n/,
  );
});

test('the body names who made each change, as the CLI does', () => {
  const event = attributedEvent();
  const mail = emailMessage([event], { domain: 'x.test' });
  assert.equal(
    mail.text,
    `${event.time} modified Deployment default/web\n${ATTRIBUTED_LINES.map((l) => `    ${l}\n`).join('')}    change id: ${event.id}\n`,
  );
});
