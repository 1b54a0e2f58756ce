/**
 * What failed, in a few words, for a line a person reads during an outage: never the request's
 * path and query (a watch's URL is ~200 characters and says nothing the line's subject does not).
 *
 * - an apiserver answer: `503 ServiceUnavailable: <the Status message>`, without the request;
 * - a network failure: its Node/undici code in words (`connection refused`, `connection reset`,
 *   ...), an HTTP/2 GOAWAY as such, or else the underlying message (without the request);
 * - anything else: its message.
 *
 * The text is cut at {@link SHORT_MESSAGE_MAX} characters.
 */
import { isRavenError } from './is-raven-error.js';

/** Long enough for a Status message, short enough for one terminal line with its subject. */
export const SHORT_MESSAGE_MAX = 120;

/** Network error codes, as a person says them. */
const CODE_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CLOSED: 'connection closed',
  ETIMEDOUT: 'connect timeout',
  UND_ERR_CONNECT_TIMEOUT: 'connect timeout',
  UND_ERR_HEADERS_TIMEOUT: 'no response headers in time',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** The Node/undici `code` of an error or of the error it wraps. */
export function networkCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code in CODE_WORDS) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * A short description of `err`.
 *
 * @example
 * shortErrorMessage(error) // 'connection refused', '503 ServiceUnavailable: etcd is not ready'
 */
export function shortErrorMessage(err: unknown): string {
  return cut(describe(err));
}

function describe(err: unknown): string {
  if (isRavenError(err, 'ERR_API')) {
    return `${err.statusCode} ${err.reason ?? 'Unknown'}: ${err.status.message ?? 'no message'}`;
  }
  const code = networkCode(err);
  if (code !== undefined) return CODE_WORDS[code] ?? code;
  const cause = isRavenError(err, 'ERR_TRANSPORT') && err.cause instanceof Error ? err.cause : undefined;
  // An HTTP/2 server going away (a restart) says so in its message, not in a code.
  if (/GOAWAY/.test(cause?.message ?? '')) return 'the server closed the connection (HTTP/2 GOAWAY)';
  if (cause !== undefined) return cause.message;
  return err instanceof Error ? err.message : String(err);
}

function cut(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= SHORT_MESSAGE_MAX ? line : `${line.slice(0, SHORT_MESSAGE_MAX - 1)}…`;
}
