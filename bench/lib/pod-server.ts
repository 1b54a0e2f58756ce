/**
 * A local stand-in apiserver for one collection of realistic pods (`/api/v1/pods`), serving every
 * contestant the same bytes. It plays the part of the apiserver a client sees, not its logic:
 *
 * - a list: `listed` pods (0 .. listed-1, at resourceVersion 1000 + i) at the list's
 *   resourceVersion {@link PodCollection.listResourceVersion}; `limit` and `continue` paginate (the
 *   continue token is the offset), without `limit` the whole list comes as one response.
 * - a watch from resourceVersion absent, "0" or the list's: `events` watch events, then the
 *   response ends; with `sendInitialEvents=true`, first an ADDED event per listed pod and the
 *   initial-events-end bookmark. Events cycle over the pods in turn: with pods listed, each event
 *   modifies the next one; with none, the first `population` events add pods and the rest modify
 *   them. Every event has a new resourceVersion.
 * - a watch from any other resourceVersion (a client resuming after the stream ended): headers,
 *   then nothing until the client goes away, so no contestant reads the stream twice; from
 *   {@link EXPIRED_RESOURCE_VERSION}, an ERROR event with a 410 Status (the client must relist).
 *
 * Lines are made on the fly from per-pod templates (the resourceVersion spliced in), so a stream of
 * a million events needs no memory, and written in 64 KiB chunks as a busy apiserver's arrive.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { makePod } from './pod-fixture.js';

const CHUNK_BYTES = 64 * 1024;

/** A watch from this resourceVersion is answered 410 Expired (a relist's benchmark starts there). */
export const EXPIRED_RESOURCE_VERSION = '1';
const EXPIRED = {
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  message: 'too old resource version: 1',
  reason: 'Expired',
  code: 410,
};
const PLACEHOLDER = '@@RV@@';

export interface PodCollectionOptions {
  /** Pods in the list. */
  listed: number;
  /** Watch events after the list. */
  events: number;
  /** With nothing listed: how many distinct pods the events add and then modify; default `events`. */
  population?: number;
}

/** The collection: what the server serves, as pieces a contestant can also be measured against. */
export class PodCollection {
  readonly listed: number;
  readonly events: number;
  readonly population: number;
  readonly #templates = new Map<string, [Buffer, Buffer]>();

  constructor(options: PodCollectionOptions) {
    this.listed = options.listed;
    this.events = options.events;
    this.population = options.listed > 0 ? options.listed : Math.max(1, options.population ?? options.events);
  }

  get listResourceVersion(): string {
    return String(1000 + this.listed);
  }

  /** The JSON of listed pod `i` (its list item). */
  item(i: number): Buffer {
    return this.#fill(`item:${i}`, () => JSON.stringify(makePod(i, PLACEHOLDER)), String(1000 + i));
  }

  /** Watch event `j` of the stream, with its newline. */
  event(j: number): Buffer {
    const pod = j % this.population;
    const type = this.listed === 0 && j < this.population ? 'ADDED' : 'MODIFIED';
    const rv = String(1000 + (this.listed > 0 ? this.listed + 1 : 0) + j);
    return this.#fill(`${type}:${pod}`, () => eventText(type, pod), rv);
  }

  /** The ADDED event of listed pod `i` in a streaming initial list. */
  initialEvent(i: number): Buffer {
    return this.#fill(`ADDED:${i}`, () => eventText('ADDED', i), String(1000 + i));
  }

  /** The whole watch stream (every event), for contestants measured on the bytes alone. */
  *stream(): Generator<Buffer> {
    for (let j = 0; j < this.events; j++) yield this.event(j);
  }

  #fill(key: string, make: () => string, rv: string): Buffer {
    let template = this.#templates.get(key);
    if (template === undefined) {
      const [head = '', tail = ''] = make().split(PLACEHOLDER);
      template = [Buffer.from(head), Buffer.from(tail)];
      this.#templates.set(key, template);
    }
    return Buffer.concat([template[0], Buffer.from(rv), template[1]]);
  }
}

function eventText(type: string, pod: number): string {
  return `${JSON.stringify({ type, object: makePod(pod, PLACEHOLDER) })}\n`;
}

export interface PodServer {
  url: string;
  close(): Promise<void>;
}

/** Serve `collection` on 127.0.0.1 at a free port. */
export async function startPodServer(collection: PodCollection): Promise<PodServer> {
  const server = createServer((req, res) => {
    handle(collection, req, res);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => closeServer(server) };
}

function handle(collection: PodCollection, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://bench.invalid');
  if (url.pathname !== '/api/v1/pods') {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"kind":"Status","code":404}');
    return;
  }
  const q = url.searchParams;
  if (q.get('watch') === 'true' || q.get('watch') === '1') watch(collection, q, res);
  else list(collection, q, res);
}

function list(collection: PodCollection, q: URLSearchParams, res: ServerResponse): void {
  const from = Number(q.get('continue') ?? '0');
  const limit = Number(q.get('limit') ?? '0');
  const to = limit > 0 ? Math.min(collection.listed, from + limit) : collection.listed;
  const next =
    to < collection.listed ? `,"continue":"${to}","remainingItemCount":${collection.listed - to}` : '';
  const head = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"${collection.listResourceVersion}"${next}},"items":[`;
  res.writeHead(200, { 'content-type': 'application/json' });
  const pieces = (function* () {
    yield Buffer.from(head);
    for (let i = from; i < to; i++)
      yield i === from ? collection.item(i) : Buffer.concat([COMMA, collection.item(i)]);
    yield Buffer.from(']}');
  })();
  pump(res, pieces);
}

const COMMA = Buffer.from(',');

function watch(collection: PodCollection, q: URLSearchParams, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
  const from = q.get('resourceVersion') ?? '';
  const initial = q.get('sendInitialEvents') === 'true';
  if (from === EXPIRED_RESOURCE_VERSION && !initial) {
    res.end(`${JSON.stringify({ type: 'ERROR', object: EXPIRED })}\n`); // compacted: the client must relist
    return;
  }
  if (!initial && from !== '' && from !== '0' && from !== collection.listResourceVersion) {
    res.flushHeaders(); // a resume: hold open, say nothing
    return;
  }
  const pieces = (function* () {
    if (initial) {
      for (let i = 0; i < collection.listed; i++) yield collection.initialEvent(i);
      yield Buffer.from(
        `${JSON.stringify({
          type: 'BOOKMARK',
          object: {
            kind: 'Pod',
            apiVersion: 'v1',
            metadata: {
              resourceVersion: collection.listResourceVersion,
              annotations: { 'k8s.io/initial-events-end': 'true' },
            },
          },
        })}\n`,
      );
    }
    yield* collection.stream();
  })();
  pump(res, pieces);
}

/** Write `pieces` in 64 KiB chunks (not aligned with lines), respecting backpressure, then end. */
function pump(res: ServerResponse, pieces: Iterator<Buffer>): void {
  let pending: Buffer = Buffer.alloc(0);
  let done = false;
  const step = (): void => {
    for (;;) {
      if (!done && pending.length < CHUNK_BYTES) {
        const parts = [pending];
        let size = pending.length;
        while (size < CHUNK_BYTES) {
          const next = pieces.next();
          if (next.done === true) {
            done = true;
            break;
          }
          parts.push(next.value);
          size += next.value.length;
        }
        pending = Buffer.concat(parts, size);
      }
      if (pending.length === 0) {
        res.end();
        return;
      }
      const piece = pending.subarray(0, CHUNK_BYTES);
      pending = pending.subarray(piece.length);
      if (!res.write(piece)) {
        res.once('drain', step);
        return;
      }
    }
  };
  res.on('close', () => res.removeAllListeners('drain'));
  step();
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
