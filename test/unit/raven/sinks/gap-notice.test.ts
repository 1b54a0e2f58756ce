/**
 * What each sink type makes of a gap notice: the record itself for the JSON sinks, a CloudEvent
 * of type `<prefix>.<resource>.gap`, a readable line on a terminal, a short message in chat.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Agent } from 'undici';
import { gapNotice, type GapNotice } from '../../../../src/raven/model/gap-notice.js';
import { gapMessage } from '../../../../src/raven/sinks/chat-messages.js';
import { ChatSink } from '../../../../src/raven/sinks/chat-sink.js';
import { CloudEventsSink } from '../../../../src/raven/sinks/cloudevents-sink.js';
import { FileSink } from '../../../../src/raven/sinks/file-sink.js';
import { formatGapText, StdoutSink } from '../../../../src/raven/sinks/stdout-sink.js';
import { WebhookSink } from '../../../../src/raven/sinks/webhook-sink.js';
import { HttpReceiver } from '../../../harness/http-receiver.js';

const signal = new AbortController().signal;
let receiver: HttpReceiver;
const dispatcher = new Agent();

before(async () => {
  receiver = await HttpReceiver.start();
});
after(async () => {
  await receiver.close();
  await dispatcher.close();
});

/** As a receiver parses it: JSON leaves out what is undefined. */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

function notice(overrides: Partial<Parameters<typeof gapNotice>[0]> = {}): GapNotice {
  return gapNotice({
    watcher: 'cms',
    resource: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' },
    reason: 'resume-expired',
    fromResourceVersion: '120',
    toResourceVersion: '480',
    since: '2024-05-01T11:00:00.000Z',
    time: '2024-05-01T12:00:00.000Z',
    ...overrides,
  });
}

test('a gap notice says what may be missing, from when, and why, and has a stable id', () => {
  const gap = notice();
  assert.equal(gap.type, 'gap');
  assert.equal(gap.id, 'cms:gap:resume-expired:120:480');
  // Two namespaces' watches losing their places over the same resourceVersions are two gaps.
  assert.equal(notice({ namespace: 'shop' }).id, 'cms:gap:resume-expired:120:480:shop');
  assert.notEqual(notice({ namespace: 'shop' }).id, notice({ namespace: 'team' }).id);
  assert.equal(
    gap.message,
    'changes to configmaps (watcher cms) after resourceVersion 120 up to 480 (since 2024-05-01T11:00:00.000Z) ' +
      'may be missing: the resourceVersion to resume from had expired while Raven was down, so it listed ' +
      'and delivered what differs from the checkpoint',
  );
  assert.match(
    notice({ reason: 'relist', namespace: 'shop', since: undefined }).message,
    /^changes to configmaps in namespace shop \(watcher cms\) after/,
  );
  assert.match(
    notice({ fromResourceVersion: undefined, reason: 'no-resume-point' }).message,
    /configmaps \(watcher cms\) up to resourceVersion 480/,
  );
});

test('the webhook posts the notice as it is, with its id in x-raven-event-id', async () => {
  const gap = notice();
  await new WebhookSink({ name: 'hook', url: receiver.url('/gap'), dispatcher }).deliver(gap, signal);
  const request = receiver.requests.at(-1);
  assert.deepEqual(request?.json, asJson(gap));
  assert.equal(request?.headers['x-raven-event-id'], 'cms:gap:resume-expired:120:480');
});

test('CloudEvents: type <prefix>.<resource>.gap, the watcher as subject, the notice as data', async () => {
  const gap = notice();
  await new CloudEventsSink({
    name: 'ce',
    url: receiver.url('/ce'),
    source: '/raven/test',
    dispatcher,
  }).deliver(gap, signal);
  assert.deepEqual(receiver.requests.at(-1)?.json, {
    specversion: '1.0',
    id: gap.id,
    source: '/raven/test',
    type: 'io.k8s.raven.configmaps.gap',
    subject: 'cms',
    time: gap.time,
    datacontenttype: 'application/json',
    ravenwatcher: 'cms',
    data: asJson(gap),
  });
});

test('the file and stdout sinks write the notice as one JSON line', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'raven-gap-'));
  try {
    const file = new FileSink({ name: 'archive', path: join(dir, 'events.jsonl') });
    await file.deliver(notice(), signal);
    await file.close();
    assert.deepEqual(JSON.parse(await readFile(join(dir, 'events.jsonl'), 'utf8')), asJson(notice()));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const chunks: string[] = [];
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string, _encoding, callback) {
      chunks.push(chunk);
      callback();
    },
  });
  await new StdoutSink({ name: 'out', stream, format: 'json' }).deliver(notice(), signal);
  assert.deepEqual(JSON.parse(chunks.join('')), asJson(notice()));
});

test('on a terminal the notice is a headline and its message', () => {
  assert.equal(
    formatGapText(notice({ reason: 'relist', namespace: 'shop' }), false),
    `2024-05-01T12:00:00.000Z gap ConfigMap watcher cms namespace shop (relist)\n    ${notice({ reason: 'relist', namespace: 'shop' }).message}\n`,
  );
  assert.ok(formatGapText(notice(), true).includes('\u001b[1m\u001b[31mgap\u001b[0m'), 'bold red');
});

test('chat products get a short message: escaped for Slack, mentions off for Discord, a card for Teams', async () => {
  const gap = notice({ watcher: '<!channel>' });
  const slack = gapMessage('slack', gap) as { text: string };
  assert.match(slack.text, /^gap in watcher &lt;!channel&gt;: changes to configmaps/);
  assert.doesNotMatch(slack.text, /<!channel>/);
  const mattermost = gapMessage('mattermost', notice(), { username: 'raven' }) as {
    text: string;
    username: string;
  };
  assert.equal(mattermost.text, `**gap in watcher cms: ${notice().message}**`);
  assert.equal(mattermost.username, 'raven');
  const discord = gapMessage('discord', notice()) as { content: string; allowed_mentions: unknown };
  assert.equal(discord.content, `gap in watcher cms: ${notice().message}`);
  assert.deepEqual(discord.allowed_mentions, { parse: [] });
  const teams = gapMessage('teams', notice()) as {
    attachments: { content: { body: { text: string }[] } }[];
  };
  assert.equal(teams.attachments[0]?.content.body[0]?.text, `gap in watcher cms: ${notice().message}`);

  await new ChatSink({
    name: 'ops',
    platform: 'slack',
    url: receiver.url('/slack'),
    dispatcher,
    template: '{{name}}',
  }).deliver(notice(), signal);
  assert.deepEqual(
    receiver.requests.at(-1)?.json,
    { text: `gap in watcher cms: ${notice().message}` },
    'a template applies to change events only',
  );
});
