import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'undici';
import { ChatSink, type ChatSinkOptions } from '../../../../src/raven/sinks/chat-sink.js';
import { SinkHttpError } from '../../../../src/raven/sinks/sink-http-error.js';
import { HttpReceiver, type ReceivedRequest } from '../../../harness/http-receiver.js';
import { ATTRIBUTED_LINES, attributedEvent, manyChanges, sampleEvent } from './fixtures.js';
import type { ChangeEvent } from '../../../../src/raven/model/change-event.js';

let receiver: HttpReceiver;
const dispatcher = new Agent();
const signal = new AbortController().signal;

before(async () => {
  receiver = await HttpReceiver.start();
});
beforeEach(() => {
  receiver.requests.length = 0;
});
after(async () => {
  await receiver.close();
  await dispatcher.close();
});

async function post(
  platform: ChatSinkOptions['platform'],
  event: ChangeEvent,
  extra: Partial<ChatSinkOptions> = {},
): Promise<ReceivedRequest> {
  const sink = new ChatSink({
    name: 'chat',
    platform,
    url: receiver.url(`/${platform}/T000/B000/tok`),
    dispatcher,
    ...extra,
  });
  await sink.deliver(event, signal);
  const [req] = await receiver.waitForRequests(1);
  assert.ok(req);
  assert.equal(req.headers['content-type'], 'application/json');
  return req;
}

test('Slack gets text as a fallback and mrkdwn blocks with the diff in a code block', async () => {
  const req = await post('slack', sampleEvent());
  assert.deepEqual(req.json, {
    text: 'modified Deployment default/web',
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: '*modified* Deployment `default/web`' } },
      { type: 'section', text: { type: 'mrkdwn', text: '```\nspec.replicas: 2 → 3\n```' } },
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: 'watcher deploys · live · 2024-05-01T12:00:00.000Z' }],
      },
    ],
  });
});

test('Slack control characters in object content are escaped', async () => {
  const event = sampleEvent({ diff: [{ path: 'data.note', op: 'add', new: '<!channel> & <http://x|y>' }] });
  const req = await post('slack', event);
  const blocks = (req.json as { blocks: { text?: { text: string } }[] }).blocks;
  assert.equal(blocks[1]?.text?.text, '```\ndata.note: + "&lt;!channel&gt; &amp; &lt;http://x|y&gt;"\n```');
});

test('Mattermost gets Markdown text and the configured username and icon', async () => {
  const req = await post('mattermost', sampleEvent(), {
    username: 'raven',
    iconUrl: 'https://example.com/raven.png',
  });
  assert.deepEqual(req.json, {
    text: '**modified** Deployment `default/web`\n```\nspec.replicas: 2 → 3\n```',
    username: 'raven',
    icon_url: 'https://example.com/raven.png',
  });
});

test('Teams gets a message with one Adaptive Card 1.4 attachment', async () => {
  const req = await post('teams', sampleEvent());
  assert.deepEqual(req.json, {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            {
              type: 'TextBlock',
              text: 'modified Deployment default/web',
              weight: 'Bolder',
              size: 'Medium',
              wrap: true,
            },
            {
              type: 'FactSet',
              facts: [
                { title: 'Kind', value: 'Deployment' },
                { title: 'Namespace', value: 'default' },
                { title: 'Name', value: 'web' },
                { title: 'Watcher', value: 'deploys' },
              ],
            },
            {
              type: 'TextBlock',
              text: 'spec.replicas: 2 → 3',
              fontType: 'Monospace',
              wrap: true,
              spacing: 'None',
            },
          ],
        },
      },
    ],
  });
});

test('Discord gets content and an embed, with mentions disabled', async () => {
  const req = await post('discord', sampleEvent(), { username: 'raven' });
  assert.deepEqual(req.json, {
    content: 'modified Deployment default/web',
    embeds: [
      {
        title: 'modified Deployment default/web',
        color: 0xecb22e,
        timestamp: '2024-05-01T12:00:00.000Z',
        footer: { text: 'watcher deploys · live' },
        description: '```\nspec.replicas: 2 → 3\n```',
      },
    ],
    username: 'raven',
    allowed_mentions: { parse: [] },
  });
});

test('a long diff is cut to maxDiffLines with a count of what was left out', async () => {
  const req = await post('mattermost', sampleEvent({ diff: manyChanges(30) }), { maxDiffLines: 3 });
  assert.equal(
    (req.json as { text: string }).text,
    '**modified** Deployment `default/web`\n```\ndata.k0: "a" → "b"\ndata.k1: "a" → "b"\ndata.k2: "a" → "b"\n… and 27 more\n```',
  );
});

test('every platform keeps within its size limits for a huge diff', async () => {
  const event = sampleEvent({ diff: manyChanges(5_000) });
  const slack = (await post('slack', event, { maxDiffLines: 10_000 })).json as {
    blocks: { text?: { text: string } }[];
  };
  assert.ok(slack.blocks.every((b) => (b.text?.text.length ?? 0) <= 3_000));
  receiver.requests.length = 0;
  const discord = (await post('discord', event, { maxDiffLines: 10_000 })).json as {
    content: string;
    embeds: { description: string }[];
  };
  assert.ok(discord.content.length <= 2_000);
  assert.ok((discord.embeds[0]?.description.length ?? 0) <= 4_096);
  assert.match(discord.embeds[0]?.description ?? '', /… and \d+ more\n```$/);
});

test('a template replaces the text on every platform', async () => {
  const template = '{{resource.kind}} {{key}} is now at {{object.spec.replicas}} replicas\n{{diff}}';
  const text = 'Deployment default/web is now at 3 replicas\nspec.replicas: 2 → 3';
  assert.deepEqual((await post('slack', sampleEvent(), { template })).json, { text });
  receiver.requests.length = 0;
  assert.deepEqual((await post('mattermost', sampleEvent(), { template })).json, { text });
  receiver.requests.length = 0;
  const teams = (await post('teams', sampleEvent(), { template })).json as {
    attachments: { content: { body: unknown[] } }[];
  };
  assert.deepEqual(teams.attachments[0]?.content.body, [{ type: 'TextBlock', text, wrap: true }]);
  receiver.requests.length = 0;
  assert.deepEqual((await post('discord', sampleEvent(), { template })).json, {
    content: text,
    allowed_mentions: { parse: [] },
  });
});

test('Discord content from a template is cut to 2000 characters', async () => {
  const req = await post('discord', sampleEvent({ name: 'x'.repeat(3_000) }), { template: '{{name}}' });
  const content = (req.json as { content: string }).content;
  assert.equal(content.length, 2_000);
  assert.ok(content.endsWith('…'));
});

test("Discord's 429 retry_after in the body is honoured, in milliseconds", async () => {
  receiver.reply({
    status: 429,
    headers: { 'retry-after': '9' },
    body: { message: 'You are being rate limited.', retry_after: 1.25, global: false },
  });
  const sink = new ChatSink({
    name: 'chat',
    platform: 'discord',
    url: receiver.url('/api/webhooks/1/tok'),
    dispatcher,
  });
  await assert.rejects(sink.deliver(sampleEvent(), signal), (err) => {
    assert.ok(err instanceof SinkHttpError);
    assert.equal(err.retryable, true);
    assert.equal(err.retryAfterMs, 1_250);
    assert.doesNotMatch(err.message, /tok|webhooks/);
    return true;
  });
  receiver.assertConsumed();
});

test('an unknown platform is a config error listing the valid ones', () => {
  assert.throws(
    () => new ChatSink({ name: 'c', platform: 'irc' as 'slack', url: 'https://example.com' }),
    /sinks\.c\.platform.*slack, mattermost, teams, discord/,
  );
});

test('a change inside a multi-line value reaches the chat as a line diff showing the changed line', async () => {
  const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`);
  const changed = lines.map((l, i) => (i === 20 ? 'line 21 (edited)' : l));
  const event = sampleEvent({
    diff: [{ path: 'data.script', op: 'replace', old: lines.join('\n'), new: changed.join('\n') }],
  });
  const req = await post('slack', event);
  const text = JSON.stringify(req.json);
  assert.match(text, /data\.script: text changed \(40 → 40 lines\)\\n {2}@@ -18,7 \+18,7 @@/);
  assert.match(text, / {2}-line 21\\n {2}\+line 21 \(edited\)/);
});

test('every platform names who made each change, as the CLI does', async () => {
  const code = `\`\`\`\n${ATTRIBUTED_LINES.join('\n')}\n\`\`\``;
  const slack = (await post('slack', attributedEvent())).json as { blocks: { text?: { text: string } }[] };
  assert.equal(slack.blocks[1]?.text?.text, code);
  receiver.requests.length = 0;
  const mattermost = (await post('mattermost', attributedEvent())).json as { text: string };
  assert.equal(mattermost.text, `**modified** Deployment \`default/web\`\n${code}`);
  receiver.requests.length = 0;
  const teams = (await post('teams', attributedEvent())).json as {
    attachments: { content: { body: { text?: string; fontType?: string }[] } }[];
  };
  const mono = teams.attachments[0]?.content.body
    .filter((b) => b.fontType === 'Monospace')
    .map((b) => b.text);
  assert.deepEqual(mono, ATTRIBUTED_LINES);
  receiver.requests.length = 0;
  const discord = (await post('discord', attributedEvent())).json as { embeds: { description: string }[] };
  assert.equal(discord.embeds[0]?.description, code);
});
