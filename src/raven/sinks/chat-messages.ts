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
import { eventObjectKey, type ChangeEvent, type ChangeType } from '../change-event.js';
import type { GapNotice, SinkRecord } from '../gap-notice.js';
import { renderTemplate } from '../template.js';
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
  const text = `gap in watcher ${notice.watcher}${where}: ${notice.message}`;
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
              body: [{ type: 'TextBlock', text, weight: 'Bolder', color: 'Attention', wrap: true }],
            },
          },
        ],
      };
    case 'discord':
      return {
        content: truncateText(text, DISCORD_CONTENT_CHARS),
        ...(options.username === undefined ? {} : { username: options.username }),
        ...(options.iconUrl === undefined ? {} : { avatar_url: options.iconUrl }),
        allowed_mentions: { parse: [] },
      };
  }
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
