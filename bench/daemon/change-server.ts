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
 *
 * For sharded replicas (`../sharding/saturation.ts`): `batches` rounds of changes, each sent once
 * `release()` is called again; `everyWatch` serves the changes to every watch from the list's
 * resourceVersion (one per replica, and again after a hand-over before the changes flow);
 * `shardSelector` plays an apiserver with `ShardedListAndWatch` on (a list echoes the selector in
 * `metadata.shardInfo`, and lists and watches carry only the selector's objects: its
 * `shardRange(object.metadata.uid|namespace, ...)` terms as `shardSelector()` writes them); and
 * `forward` sends every other request (the replicas' Leases) to a real apiserver, as it came.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fnv1a64 } from '../../src/watch/shard/fnv1a64.js';
import { makePod } from '../lib/pod-fixture.js';

const RV = '@@RV@@';
const REVISION = '@@REVISION@@';

export interface ChangeServerOptions {
  objects: number;
  changes: number;
  /** Rounds of `changes` changes, each sent when `release()` is called (default 1). */
  batches?: number;
  /** Send the changes to a watch only once `release()` is called (default: at once). */
  held?: boolean;
  /** Serve the changes to every watch from the list's resourceVersion, not only the first. */
  everyWatch?: boolean;
  /** Filter by `shardSelector` and echo it, as an apiserver with `ShardedListAndWatch` on. */
  shardSelector?: boolean;
  /** Send requests for any other path there (the apiserver's URL and its CA file). */
  forward?: { server: string; caFile: string };
}

export interface ChangeServer {
  url: string;
  /** The watch stream's lines, as served (for the raw parse baseline). */
  events(): Generator<string>;
  /** Let the next batch of changes flow. */
  release(): void;
  close(): Promise<void>;
}

/** Which of the pods (by number) a `shardSelector` selects; undefined selects all. */
type Selected = ((i: number) => boolean) | undefined;

const SHARD_RANGE = /shardRange\(object\.metadata\.(uid|namespace), '0x([0-9a-f]+)', '0x([0-9a-f]+)'\)/g;

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
  const batches = options.batches ?? 1;
  const gates = Array.from({ length: batches }, () => {
    let resolve = (): void => undefined;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  });
  if (options.held !== true) gates[0]?.resolve();
  let released = options.held === true ? 0 : 1;
  /** One batch of the changes, to `selected` pods. */
  function* batchOf(batch: number, selected: Selected): Generator<string> {
    for (let j = batch * options.changes; j < (batch + 1) * options.changes; j++)
      if (selected === undefined || selected(j % options.objects)) yield eventLine(j);
  }
  /** Each batch once it is released, then the end of the response. */
  const follow = (res: ServerResponse, selected: Selected, batch = 0): void => {
    const gate = gates[batch];
    if (gate === undefined) {
      res.end();
      return;
    }
    void gate.promise.then(() => pump(res, batchOf(batch, selected), () => follow(res, selected, batch + 1)));
  };
  const events = (): Generator<string> => batchOf(0, undefined);
  const identities = Array.from({ length: options.objects }, (_, i) => {
    const { uid, namespace } = (makePod(i) as { metadata: { uid: string; namespace: string } }).metadata;
    return { uid: fnv1a64(uid), namespace: fnv1a64(namespace) };
  });
  const selection = (q: URLSearchParams): Selected => {
    const selector = options.shardSelector === true ? q.get('shardSelector') : null;
    if (selector === null || selector === '') return undefined;
    const ranges = [...selector.matchAll(SHARD_RANGE)].map(([, field, start, end]) => ({
      field: field as 'uid' | 'namespace',
      start: BigInt(`0x${start}`),
      end: BigInt(`0x${end}`),
    }));
    const owned = identities.map((id) => ranges.some((r) => id[r.field] >= r.start && id[r.field] < r.end));
    return (i) => owned[i] === true;
  };
  const ca = options.forward === undefined ? undefined : readFileSync(options.forward.caFile);
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
        if (options.forward !== undefined) {
          forward(req, res, options.forward.server, ca);
          return;
        }
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"kind":"Status","code":404}');
        return;
    }
    const q = url.searchParams;
    const selected = selection(q);
    if (q.get('watch') !== 'true' && q.get('watch') !== '1') {
      list(q, res, selected);
      return;
    }
    const from = q.get('resourceVersion') ?? '';
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    if ((watched && options.everyWatch !== true) || (from !== '' && from !== listRv(options.objects))) {
      res.flushHeaders(); // a resume: hold open, say nothing
      return;
    }
    watched = true;
    if (q.get('sendInitialEvents') !== 'true') {
      res.flushHeaders();
      follow(res, selected);
      return;
    }
    pump(res, initialEvents(selected), () => follow(res, selected));
  }
  function* initialEvents(selected: Selected): Generator<string> {
    for (let i = 0; i < options.objects; i++)
      if (selected === undefined || selected(i))
        yield `${JSON.stringify({ type: 'ADDED', object: makePod(i) })}\n`;
    const end = {
      resourceVersion: listRv(options.objects),
      annotations: { 'k8s.io/initial-events-end': 'true' },
    };
    yield `${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: end } })}\n`;
  }
  function list(q: URLSearchParams, res: ServerResponse, selected: Selected): void {
    const limit = Number(q.get('limit') ?? '0');
    const items: unknown[] = [];
    let next = Number(q.get('continue') ?? '0');
    for (; next < options.objects && (limit <= 0 || items.length < limit); next++)
      if (selected === undefined || selected(next)) items.push(makePod(next));
    const metadata: Record<string, unknown> = { resourceVersion: listRv(options.objects) };
    if (next < options.objects) metadata.continue = String(next);
    if (selected !== undefined) metadata.shardInfo = { selector: q.get('shardSelector') };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata, items }));
  }
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    events,
    release: () => gates[released++]?.resolve(),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Pass a request on to `server` as it came (its bearer token too), and its answer back. */
function forward(req: IncomingMessage, res: ServerResponse, server: string, ca: Buffer | undefined): void {
  const target = new URL(req.url ?? '/', server);
  const upstream = httpsRequest(
    target,
    { method: req.method, headers: { ...req.headers, host: target.host }, ca },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', (err) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(err.message);
  });
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
}

/** Write lines in 64 KiB chunks (a busy apiserver's size), respecting backpressure, then `done`. */
function pump(res: ServerResponse, lines: Iterator<string>, done: () => void): void {
  const step = (): void => {
    if (res.destroyed) return;
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
