/**
 * Webhook URLs are credentials: Slack, Discord and Teams put the token in the path or query. Any
 * URL a sink shows (errors, logs) goes through {@link scrubUrl} first, leaving scheme and host.
 */

/**
 * `scheme://host/…` with user info, path, query and fragment removed.
 *
 * @example
 * scrubUrl('https://hooks.slack.com/services/T0/B0/secret'); // => 'https://hooks.slack.com/…'
 */
export function scrubUrl(url: string | URL): string {
  try {
    const u = typeof url === 'string' ? new URL(url) : url;
    return `${u.protocol}//${u.host}/…`;
  } catch {
    return '<invalid url>';
  }
}
