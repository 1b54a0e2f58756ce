/** The `--port` and `--listen` flags of the commands that serve HTTP (`raven run`, `raven ui`). */
import { UsageError } from './usage-error.js';

/** A port from 0 to 65535 (0 picks a free one). */
export function parsePort(text: string, flag: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 0 && port <= 65_535))
    throw new UsageError(`${flag} must be a port from 0 to 65535 (0 picks a free one); got "${text}"`);
  return port;
}

/** `0.0.0.0:9479`, `[::1]:9479`, `localhost:9479`. */
export function parseListen(text: string, flag: string): { address: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):([^:]*)$/.exec(text);
  const address = match?.[1] ?? match?.[2];
  if (match === null || address === undefined)
    throw new UsageError(
      `${flag} must be ADDRESS:PORT, e.g. 127.0.0.1:9479, 0.0.0.0:9479 or [::1]:9479; got "${text}"`,
    );
  return { address, port: parsePort(match[3] ?? '', flag) };
}

/** `--port PORT` and `--listen ADDRESS:PORT`. */
export const LISTEN_OPTIONS = {
  port: { type: 'string' },
  listen: { type: 'string' },
} as const;

/** What `--listen` or `--port` ask for (one of them at most), or undefined when neither is given. */
export function listenFlags(values: {
  port?: string;
  listen?: string;
}): { address?: string; port: number } | undefined {
  if (values.listen !== undefined && values.port !== undefined)
    throw new UsageError('use either --listen ADDRESS:PORT or --port PORT, not both');
  if (values.listen !== undefined) return parseListen(values.listen, '--listen');
  if (values.port !== undefined) return { port: parsePort(values.port, '--port') };
  return undefined;
}
