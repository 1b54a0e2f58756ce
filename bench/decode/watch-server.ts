/**
 * A local stand-in apiserver for the decoding benchmark: every contestant reads the same bytes.
 *
 * - `GET /api/v1/pods` (a list): an empty PodList at resourceVersion 1, for clients that list first.
 * - `GET /api/v1/pods?watch=true` from resourceVersion absent, "0" or "1": the whole prepared
 *   stream of ADDED events, then the response ends.
 * - a watch from any later resourceVersion (a client resuming after the stream ended): held open
 *   with nothing to say until the client goes away, so no contestant reads the stream twice.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { podEventLine } from '../lib/pod-fixture.js';

/** Chunks as a busy apiserver's would arrive: not aligned with lines. */
const CHUNK_BYTES = 64 * 1024;

export interface WatchServer {
  url: string;
  /** Bytes in one full stream. */
  bytes: number;
  close(): Promise<void>;
}

/** The stream: `events` ADDED events of distinct pods, concatenated. */
export function buildStream(events: number): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < events; i++) parts.push(Buffer.from(podEventLine(i)));
  return Buffer.concat(parts);
}

export async function startWatchServer(body: Buffer): Promise<WatchServer> {
  const server = createServer((req, res) => {
    handle(body, req, res);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, bytes: body.length, close: () => closeServer(server) };
}

function handle(body: Buffer, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://bench.invalid');
  if (url.pathname !== '/api/v1/pods') {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"kind":"Status","code":404}');
    return;
  }
  const watching = url.searchParams.get('watch');
  if (watching !== 'true' && watching !== '1') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}');
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
  const from = url.searchParams.get('resourceVersion') ?? '';
  if (from !== '' && from !== '0' && from !== '1') return; // a resume: hold open, say nothing
  let offset = 0;
  const pump = (): void => {
    while (offset < body.length) {
      const end = Math.min(offset + CHUNK_BYTES, body.length);
      const more = res.write(body.subarray(offset, end));
      offset = end;
      if (!more) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
