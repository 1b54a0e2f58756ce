/**
 * A local stand-in apiserver for the daemon benchmark: discovery for core v1 pods, a list of
 * `objects` realistic pods (`../lib/pod-fixture.ts`, ~7.6 KB each as JSON), then a watch of
 * `changes` MODIFIED events cycling over them, each a real change (a new value of the annotation
 * `bench.raven.dev/revision`, so every event has a one-entry diff and reaches the sinks). A watch
 * that resumes from any other resourceVersion is held open, silent. It plays the part of the
 * apiserver a client sees, not its logic.
 *
 * A watch with `sendInitialEvents=true` (a streaming list, the daemon's default) first gets an
 * ADDED event per pod and the initial-events-end bookmark; the changes follow once `release()` is
 * called, so the benchmark can start its clock when the daemon says it has synced.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { makePod } from '../lib/pod-fixture.js';

const RV = '@@RV@@';
const REVISION = '@@REVISION@@';

export interface ChangeServerOptions {
  objects: number;
  changes: number;
  /** Resolves when the changes may flow (after a streaming list); default at once. */
  release?: Promise<void>;
}

export interface ChangeServer {
  url: string;
  /** The watch stream's lines, as served (for the raw parse baseline). */
  events(): Generator<string>;
  close(): Promise<void>;
}

const listRv = (objects: number): string => String(1000 + objects);

function podTemplate(i: number): string {
  const pod = makePod(i, RV) as { metadata: { annotations: Record<string, string> } };
  pod.metadata.annotations['bench.raven.dev/revision'] = REVISION;
  return JSON.stringify({ type: 'MODIFIED', object: pod });
}

export async function startChangeServer(options: ChangeServerOptions): Promise<ChangeServer> {
  const templates = Array.from({ length: options.objects }, (_, i) => podTemplate(i));
  const eventLine = (j: number): string =>
    `${(templates[j % options.objects] ?? '')
      .replace(RV, String(1001 + options.objects + j))
      .replace(REVISION, String(j))}\n`;
  function* events(): Generator<string> {
    for (let j = 0; j < options.changes; j++) yield eventLine(j);
  }
  let watched = false;
  const server = createServer((req, res) => {
    handle(req, res);
  });
  function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://bench.invalid');
    const json = (body: unknown): void => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    switch (url.pathname) {
      case '/api':
        json({ kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
        return;
      case '/apis':
        json({ kind: 'APIGroupList', apiVersion: 'v1', groups: [] });
        return;
      case '/api/v1':
        json({
          kind: 'APIResourceList',
          groupVersion: 'v1',
          resources: [
            {
              name: 'pods',
              singularName: 'pod',
              namespaced: true,
              kind: 'Pod',
              verbs: ['get', 'list', 'watch'],
              shortNames: ['po'],
            },
          ],
        });
        return;
      case '/api/v1/pods':
        break;
      default:
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"kind":"Status","code":404}');
        return;
    }
    const q = url.searchParams;
    if (q.get('watch') !== 'true' && q.get('watch') !== '1') {
      list(q, res);
      return;
    }
    const from = q.get('resourceVersion') ?? '';
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    if (watched || (from !== '' && from !== listRv(options.objects))) {
      res.flushHeaders(); // a resume: hold open, say nothing
      return;
    }
    watched = true;
    if (q.get('sendInitialEvents') !== 'true') {
      pump(res, events(), () => res.end());
      return;
    }
    pump(res, initialEvents(), () => {
      void (options.release ?? Promise.resolve()).then(() => pump(res, events(), () => res.end()));
    });
  }
  function* initialEvents(): Generator<string> {
    for (let i = 0; i < options.objects; i++)
      yield `${JSON.stringify({ type: 'ADDED', object: makePod(i) })}\n`;
    const end = {
      resourceVersion: listRv(options.objects),
      annotations: { 'k8s.io/initial-events-end': 'true' },
    };
    yield `${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: end } })}\n`;
  }
  function list(q: URLSearchParams, res: ServerResponse): void {
    const from = Number(q.get('continue') ?? '0');
    const limit = Number(q.get('limit') ?? '0');
    const to = limit > 0 ? Math.min(options.objects, from + limit) : options.objects;
    const items: unknown[] = [];
    for (let i = from; i < to; i++) items.push(makePod(i));
    const metadata: Record<string, unknown> = { resourceVersion: listRv(options.objects) };
    if (to < options.objects) metadata.continue = String(to);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata, items }));
  }
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    events,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Write lines in 64 KiB chunks (a busy apiserver's size), respecting backpressure, then `done`. */
function pump(res: ServerResponse, lines: Iterator<string>, done: () => void): void {
  const step = (): void => {
    for (;;) {
      let chunk = '';
      while (chunk.length < 64 * 1024) {
        const next = lines.next();
        if (next.done === true) {
          if (chunk !== '') res.write(chunk);
          done();
          return;
        }
        chunk += next.value;
      }
      if (!res.write(chunk)) {
        res.once('drain', step);
        return;
      }
    }
  };
  step();
}
