/**
 * One request through a pool (see `http-pool.ts`), with the same failure contract for every
 * caller: an aborted request rejects with the signal's reason; a {@link RavenError} raised below
 * (by an interceptor or a credential provider) passes through; any other failure before the
 * answer's headers is a {@link TransportError} whose `cause` is undici's error. Status codes are
 * not interpreted here: that is the caller's job.
 */
import type { Dispatcher } from 'undici';
import { RavenError, TransportError } from '../errors/raven-error.js';
import { abortReason } from '../util/signals.js';

export interface HttpRequest {
  method: string;
  /** Absolute URL with query, or its origin and path (a path is sent exactly as given). */
  url: string | URL | { origin: string; path: string };
  headers?: Record<string, string>;
  body?: string | Uint8Array | null;
  signal?: AbortSignal | undefined;
  /** Limit for the answer's headers to arrive; default undici's (300 s). */
  headersTimeoutMs?: number;
  /** Limit between body chunks; 0 disables it (watches). Default undici's (300 s). */
  bodyTimeoutMs?: number;
  /** Prefix for a TransportError's message (`GET /api/v1/pods`); none by default. */
  label?: string;
}

/**
 * Send `req` and resolve with the answer; its body must be consumed or destroyed by the caller.
 *
 * @example
 * const res = await send(pool, { method: 'POST', url, body, headersTimeoutMs: 10_000, signal });
 * const text = await res.body.text();
 */
export async function send(dispatcher: Dispatcher, req: HttpRequest): Promise<Dispatcher.ResponseData> {
  const { origin, path } = target(req.url);
  try {
    return await dispatcher.request({
      origin,
      path,
      method: req.method,
      headers: req.headers ?? {},
      body: req.body ?? null,
      signal: req.signal ?? null,
      ...(req.headersTimeoutMs === undefined ? {} : { headersTimeout: req.headersTimeoutMs }),
      ...(req.bodyTimeoutMs === undefined ? {} : { bodyTimeout: req.bodyTimeoutMs }),
    });
  } catch (err) {
    throw requestFailure(err, req);
  }
}

function target(url: HttpRequest['url']): { origin: string; path: string } {
  if (typeof url === 'object' && !(url instanceof URL)) return url;
  const parsed = typeof url === 'string' ? new URL(url) : url;
  return { origin: parsed.origin, path: parsed.pathname + parsed.search };
}

/** What a failed request rejects with; see the module contract. */
export function requestFailure(err: unknown, req: Pick<HttpRequest, 'signal' | 'label'>): Error {
  if (req.signal?.aborted === true) return abortReason(req.signal);
  if (err instanceof RavenError) return err;
  const cause = err as Error & { code?: string };
  const code = cause.code === undefined ? '' : ` (${cause.code})`;
  const label = req.label === undefined ? '' : `${req.label}: `;
  return new TransportError(`${label}${cause.message}${code}`, { cause: err });
}
