/**
 * The message bodies of the chat products' incoming webhooks, built from a change event: a
 * headline (type, kind, namespace/name) and the diff, cut to fit each product's limits with
 * "… and N more". With a template, the rendered text replaces the whole message text.
 *
 * - Slack: `{ text, blocks }`, mrkdwn with `&`, `<`, `>` escaped in everything taken from the
 *   event (so object content cannot mention `@channel` or forge links; a template's own text is
 *   kept, so it may contain links); `text` is the notification fallback.
 * - Mattermost: `{ text }` in Markdown, with optional `username` and `icon_url`.
 * - Microsoft Teams (workflow webhooks): a message with one Adaptive Card 1.4 attachment.
 * - Discord: `{ content, embeds }`, content within 2 000 characters, mentions disabled.
 *
 * A gap notice (for a sink that opted in) is a short text message in each product's format:
 * `gap in watcher <name>: <what may be missing and why>`. Templates do not apply to it.
 */
import { eventObjectKey, type ChangeEvent, type ChangeType } from '../model/change-event.js';
import type { GapNotice, SinkRecord } from '../model/gap-notice.js';
import { renderTemplate } from '../model/template.js';
import { eventHeadline, eventLines, eventNote, fitLines, truncateText } from './event-summary.js';

export type ChatPlatform = 'slack' | 'mattermost' | 'teams' | 'discord';

export interface ChatMessageOptions {
  /** Replaces the message text; see `template.ts`. */
  template?: string;
  /** Diff lines shown before "… and N more"; default 20. */
  maxDiffLines?: number;
  /** Mattermost and Discord: the poster's name and avatar. */
  username?: string;
  iconUrl?: string;
}

/** Slack section text is limited to 3 000 characters. */
const SLACK_SECTION_CHARS = 3_000;
/** Slack's `text` is cut by Slack past 40 000 characters; stay well below. */
const SLACK_TEXT_CHARS = 4_000;
/** Mattermost's post limit is 16 383 characters. */
const MATTERMOST_CHARS = 16_000;
/** Adaptive Cards have no hard text limit, but Teams rejects messages over ~28 KB. */
const TEAMS_DIFF_CHARS = 12_000;
const DISCORD_CONTENT_CHARS = 2_000;
const DISCORD_TITLE_CHARS = 256;
const DISCORD_DESCRIPTION_CHARS = 4_096;

const DISCORD_COLOR: Record<ChangeType, number> = { added: 0x2eb67d, modified: 0xecb22e, deleted: 0xe01e5a };

/** The body to POST for `platform`. */
export function chatMessage(
  platform: ChatPlatform,
  event: SinkRecord,
  options: ChatMessageOptions = {},
): object {
  if (event.type === 'gap') return gapMessage(platform, event, options);
  switch (platform) {
    case 'slack':
      return slackMessage(event, options);
    case 'mattermost':
      return mattermostMessage(event, options);
    case 'teams':
      return teamsMessage(event, options);
    case 'discord':
      return discordMessage(event, options);
  }
}

/** A gap notice as a short message: one line of text, escaped and cut for the product. */
export function gapMessage(
  platform: ChatPlatform,
  notice: GapNotice,
  options: ChatMessageOptions = {},
): object {
  const where = notice.namespace === undefined ? '' : ` (namespace ${notice.namespace})`;
  return textMessage(platform, `gap in watcher ${notice.watcher}${where}: ${notice.message}`, options);
}

/** A line of Raven's own text (a gap notice, a digest) as a short message, escaped and cut for the product. */
export function textMessage(platform: ChatPlatform, text: string, options: ChatMessageOptions = {}): object {
  switch (platform) {
    case 'slack':
      return { text: truncateText(slackEscape(text), SLACK_TEXT_CHARS) };
    case 'mattermost':
      return {
        text: truncateText(`**${text}**`, MATTERMOST_CHARS),
        ...(options.username === undefined ? {} : { username: options.username }),
        ...(options.iconUrl === undefined ? {} : { icon_url: options.iconUrl }),
      };
    case 'teams':
      return teamsCard([{ type: 'TextBlock', text, weight: 'Bolder', color: 'Attention', wrap: true }]);
    case 'discord':
      return {
        content: truncateText(text, DISCORD_CONTENT_CHARS),
        ...(options.username === undefined ? {} : { username: options.username }),
        ...(options.iconUrl === undefined ? {} : { avatar_url: options.iconUrl }),
        allowed_mentions: { parse: [] },
      };
  }
}

/** Slack rejects a message with more than 50 blocks. */
const SLACK_MAX_BLOCKS = 50;
/** Discord takes at most 10 embeds per message. */
const DISCORD_MAX_EMBEDS = 10;

interface SlackBody {
  text?: string;
  blocks?: object[];
}
interface TextBody {
  text?: string;
  content?: string;
  embeds?: object[];
  attachments?: { content: { body: object[] } }[];
}

/**
 * Several messages (each built by {@link chatMessage} or {@link textMessage}) as one post, in
 * order: Slack's blocks with a divider between messages, Mattermost's texts one after the other,
 * one Teams card, Discord's embeds. What does not fit the product's limits is cut with
 * "… and N more" (the changes were still delivered: the post is their delivery).
 */
export function chatBatchMessage(platform: ChatPlatform, messages: readonly object[]): object {
  if (messages.length === 1 && messages[0] !== undefined) return messages[0];
  const more = (n: number): string => `… and ${n} more`;
  switch (platform) {
    case 'slack': {
      const bodies = messages as SlackBody[];
      const blocks: object[] = [];
      let shown = 0;
      for (const body of bodies) {
        const own = body.blocks ?? [{ type: 'section', text: { type: 'mrkdwn', text: body.text ?? '' } }];
        if (blocks.length + own.length + 2 > SLACK_MAX_BLOCKS) break;
        if (blocks.length > 0) blocks.push({ type: 'divider' });
        blocks.push(...own);
        shown++;
      }
      if (shown < bodies.length)
        blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: more(bodies.length - shown) }] });
      const text = truncateText(bodies.map((b) => b.text ?? '').join('\n'), SLACK_TEXT_CHARS);
      return { text, blocks };
    }
    case 'mattermost': {
      const first = messages[0] as Record<string, unknown>;
      const text = truncateText(
        (messages as TextBody[]).map((m) => m.text ?? '').join('\n\n'),
        MATTERMOST_CHARS,
      );
      return { ...first, text };
    }
    case 'teams':
      return teamsCard(
        (messages as TextBody[]).flatMap((m, i) => {
          const body = m.attachments?.[0]?.content.body ?? [];
          const [head, ...rest] = body;
          return i === 0 || head === undefined ? body : [{ ...head, separator: true }, ...rest];
        }),
      );
    case 'discord': {
      const bodies = messages as TextBody[];
      const embeds = bodies.flatMap((m) => m.embeds ?? []);
      const plain = bodies.filter((m) => m.embeds === undefined).map((m) => m.content ?? '');
      const kept = embeds.slice(0, DISCORD_MAX_EMBEDS);
      const lines = [
        `${bodies.length} changes`,
        ...plain,
        ...(embeds.length > kept.length ? [more(embeds.length - kept.length)] : []),
      ];
      const first = bodies[0] as Record<string, unknown>;
      return {
        ...first,
        content: truncateText(lines.join('\n'), DISCORD_CONTENT_CHARS),
        ...(kept.length === 0 ? {} : { embeds: kept }),
        allowed_mentions: { parse: [] },
      };
    }
  }
}

function teamsCard(body: object[]): object {
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body,
        },
      },
    ],
  };
}

function diffLines(event: ChangeEvent, options: ChatMessageOptions, maxChars: number): string[] {
  return fitLines(eventLines(event), { maxLines: options.maxDiffLines ?? 20, maxChars });
}

/** Inside a fenced block, a run of backticks in a value would end the block early. */
function fence(lines: string[]): string {
  return '```\n' + lines.map((l) => l.replaceAll('```', 'ʼʼʼ')).join('\n') + '\n```';
}

function slackEscape(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

export function slackMessage(event: ChangeEvent, options: ChatMessageOptions = {}): object {
  if (options.template !== undefined)
    return {
      text: truncateText(renderTemplate(options.template, event, { escape: slackEscape }), SLACK_TEXT_CHARS),
    };
  const headline = eventHeadline(event);
  const blocks: object[] = [
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: slackEscape(
          `*${event.type}* ${event.resource.kind} \`${eventObjectKey(event)}\`${eventNote(event)}`,
        ),
      },
    },
  ];
  // The fence and the escaping take room too; leave a margin.
  const lines = diffLines(event, options, SLACK_SECTION_CHARS - 200).map(slackEscape);
  if (lines.length > 0) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: fence(lines) } });
  blocks.push({
    type: 'context',
    elements: [
      { type: 'mrkdwn', text: slackEscape(`watcher ${event.watcher} · ${event.origin} · ${event.time}`) },
    ],
  });
  return { text: slackEscape(headline), blocks };
}

export function mattermostMessage(event: ChangeEvent, options: ChatMessageOptions = {}): object {
  const text =
    options.template !== undefined
      ? truncateText(renderTemplate(options.template, event), MATTERMOST_CHARS)
      : markdownText(event, options, MATTERMOST_CHARS - 500);
  return {
    text,
    ...(options.username === undefined ? {} : { username: options.username }),
    ...(options.iconUrl === undefined ? {} : { icon_url: options.iconUrl }),
  };
}

function markdownText(event: ChangeEvent, options: ChatMessageOptions, maxDiffChars: number): string {
  const headline = `**${event.type}** ${event.resource.kind} \`${eventObjectKey(event)}\`${eventNote(event)}`;
  const lines = diffLines(event, options, maxDiffChars);
  return lines.length === 0 ? headline : `${headline}\n${fence(lines)}`;
}

export function teamsMessage(event: ChangeEvent, options: ChatMessageOptions = {}): object {
  const body: object[] =
    options.template !== undefined
      ? [{ type: 'TextBlock', text: renderTemplate(options.template, event), wrap: true }]
      : [
          { type: 'TextBlock', text: eventHeadline(event), weight: 'Bolder', size: 'Medium', wrap: true },
          {
            type: 'FactSet',
            facts: [
              { title: 'Kind', value: event.resource.kind },
              { title: 'Namespace', value: event.namespace ?? '' },
              { title: 'Name', value: event.name },
              { title: 'Watcher', value: event.watcher },
            ].filter((fact) => fact.value !== ''),
          },
          // One block per line: Adaptive Card text collapses single newlines.
          ...diffLines(event, options, TEAMS_DIFF_CHARS).map((line) => ({
            type: 'TextBlock',
            text: line,
            fontType: 'Monospace',
            wrap: true,
            spacing: 'None',
          })),
        ];
  return teamsCard(body);
}

export function discordMessage(event: ChangeEvent, options: ChatMessageOptions = {}): object {
  const who = {
    ...(options.username === undefined ? {} : { username: options.username }),
    ...(options.iconUrl === undefined ? {} : { avatar_url: options.iconUrl }),
    // Object content must never ping anyone.
    allowed_mentions: { parse: [] },
  };
  if (options.template !== undefined)
    return { content: truncateText(renderTemplate(options.template, event), DISCORD_CONTENT_CHARS), ...who };
  const headline = eventHeadline(event);
  const lines = diffLines(event, options, DISCORD_DESCRIPTION_CHARS - 20);
  const embed = {
    title: truncateText(headline, DISCORD_TITLE_CHARS),
    color: DISCORD_COLOR[event.type],
    timestamp: event.time,
    footer: { text: truncateText(`watcher ${event.watcher} · ${event.origin}`, 200) },
    ...(lines.length === 0 ? {} : { description: fence(lines) }),
  };
  return { content: truncateText(headline, DISCORD_CONTENT_CHARS), embeds: [embed], ...who };
}
