/**
 * The decoding contestants. Each reads the watch stream of the local pod server and resolves with
 * the number of changes it delivered to its consumer (ADDED and MODIFIED); the consumer does
 * nothing but count, so the numbers are the cost of getting from bytes to objects, plus whatever
 * the contestant keeps doing on the way (resourceVersions, the previous state, a cache).
 */
import { get } from 'node:http';
import { NAMESPACES } from '../lib/pod-fixture.js';
import { clientNodeConfig, loadClientNode, loadFluentClient } from '../lib/peers.js';
import { loadRaven, ravenClient } from '../lib/raven.js';

export interface DecodeTarget {
  /** Base URL of the pod server. */
  url: string;
  /** A kubeconfig whose server is `url`. */
  kubeconfig: string;
  /** Events in the stream. */
  events: number;
  /** Distinct pods the events add and then modify. */
  population: number;
}

export interface Contestant {
  name: string;
  description: string;
  /** Changes the consumer should see; the run fails otherwise. */
  expected(target: DecodeTarget): number;
  /** Needs Node 22.19 or later (kubernetes-fluent-client and its undici 8). */
  node22?: boolean;
  /** Load modules and build clients (not timed); the returned function is timed. */
  prepare(target: DecodeTarget): Promise<() => Promise<number>>;
}

const PATH = '/api/v1/pods';
const all = (t: DecodeTarget): number => t.events;
/** The filter contestant keeps one namespace of ten. */
const kept = NAMESPACES[0] ?? '';
const oneInTen = (t: DecodeTarget): number => {
  let n = 0;
  for (let j = 0; j < t.events; j++) if ((j % t.population) % NAMESPACES.length === 0) n++;
  return n;
};

/** node:http, split on newlines, optionally JSON.parse each line: the floor any decoder stands on. */
function raw(name: string, description: string, parse: boolean): Contestant {
  return {
    name,
    description,
    expected: all,
    prepare: (target) =>
      Promise.resolve(
        () =>
          new Promise<number>((resolve, reject) => {
            get(`${target.url}${PATH}?watch=true`, (res) => {
              let count = 0;
              let pending = '';
              res.setEncoding('utf8');
              res.on('data', (chunk: string) => {
                pending += chunk;
                let start = 0;
                for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n', start)) {
                  if (!parse) count++;
                  else if ((JSON.parse(pending.slice(start, nl)) as { type?: string }).type !== undefined)
                    count++;
                  start = nl + 1;
                }
                pending = pending.slice(start);
              });
              res.on('end', () => resolve(count));
              res.on('error', reject);
            }).on('error', reject);
          }),
      ),
  };
}

function ravenDecode(
  name: string,
  description: string,
  options: { dropManagedFields?: boolean; filter?: (peek: { namespace?: string }) => boolean },
  expected: (t: DecodeTarget) => number,
): Contestant {
  return {
    name,
    description,
    expected,
    prepare: async (target) => {
      const raven = await loadRaven();
      const client = await ravenClient(raven, target.kubeconfig);
      return async () => {
        const response = await client.stream({ path: PATH, query: { watch: true } });
        let count = 0;
        for await (const event of raven.decodeWatchEvents(response.body, options)) {
          if (event.type !== 'ERROR') count++;
        }
        await client.destroy();
        return count;
      };
    },
  };
}

type WatchOptions = { dropManagedFields?: boolean; keepObjects?: boolean };

/**
 * The whole list+watch engine, with its defaults unless told otherwise: the streaming initial
 * list, resourceVersion tracking, and a copy of every object for `previous` and tombstones.
 * `readPrevious`: the consumer reads `previous` of every `modified`, as the CLI does for its diffs.
 */
function ravenWatch(
  name: string,
  description: string,
  options: WatchOptions & { scoped?: boolean; readPrevious?: boolean },
): Contestant {
  return {
    name,
    description,
    expected: all,
    prepare: async (target) => {
      const raven = await loadRaven();
      const client = await ravenClient(raven, target.kubeconfig);
      const { scoped, readPrevious, ...watchOptions } = options;
      return async () => {
        const expected = all(target);
        const watcher =
          scoped === true
            ? raven.watchResource({
                transport: client,
                resource: { group: '', version: 'v1', resource: 'pods', namespaced: true },
                ...watchOptions,
              })
            : raven.watch({ transport: client, path: PATH, ...watchOptions });
        let count = 0;
        let previous = 0;
        for await (const event of watcher) {
          if (event.type === 'error') throw event.error;
          if (event.type === 'modified' && readPrevious === true && event.previous !== undefined) previous++;
          if ((event.type === 'added' || event.type === 'modified') && ++count === expected) break;
        }
        if (readPrevious === true && previous !== expected - target.population)
          throw new Error(`read ${previous} previous states, expected ${expected - target.population}`);
        await client.destroy();
        return count;
      };
    },
  };
}

const clientNodeWatch: Contestant = {
  name: 'client-node-watch',
  description: "@kubernetes/client-node's Watch (decodes only; keeps nothing)",
  expected: all,
  prepare: async (target) => {
    const { Watch } = await loadClientNode();
    const watch = new Watch(await clientNodeConfig(target.kubeconfig));
    return () =>
      new Promise<number>((resolve, reject) => {
        let count = 0;
        watch
          .watch(
            PATH,
            {},
            (phase) => {
              if (phase === 'ADDED' || phase === 'MODIFIED') count++;
            },
            (err) => (err === null || err === undefined ? resolve(count) : reject(toError(err))),
          )
          .catch(reject);
      });
  },
};

const clientNodeInformer: Contestant = {
  name: 'client-node-informer',
  description: "@kubernetes/client-node's informer (list, then watch into its cache)",
  expected: all,
  prepare: async (target) => {
    const { makeInformer, CoreV1Api } = await loadClientNode();
    const config = await clientNodeConfig(target.kubeconfig);
    const api = config.makeApiClient(CoreV1Api);
    return () =>
      new Promise<number>((resolve, reject) => {
        const expected = all(target);
        const informer = makeInformer(config, PATH, () => api.listPodForAllNamespaces());
        let count = 0;
        const seen = (): void => {
          if (++count === expected) informer.stop().then(() => resolve(count), reject);
        };
        informer.on('add', seen);
        informer.on('update', seen);
        informer.on('error', (err) => reject(toError(err)));
        informer.start().catch(reject);
      });
  },
};

const fluentWatch: Contestant = {
  name: 'fluent-watch',
  description: "kubernetes-fluent-client's Watch (list, then watch into its cache)",
  expected: all,
  node22: true,
  prepare: async (target) => {
    process.env.KUBECONFIG = target.kubeconfig;
    const { K8s, kind } = await loadFluentClient();
    return () =>
      new Promise<number>((resolve, reject) => {
        const expected = all(target);
        let count = 0;
        const watcher = K8s(kind.Pod).Watch((_object, phase) => {
          if ((phase === 'ADDED' || phase === 'MODIFIED') && ++count === expected) {
            watcher.close();
            resolve(count);
          }
        });
        for (const failure of ['network_error', 'list_error', 'watch_error', 'data_error']) {
          watcher.events.on(failure, (err) => reject(toError(err)));
        }
        watcher.start().catch(reject);
      });
  },
};

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

export const contestants: readonly Contestant[] = [
  raw('raw', 'node:http GET, split on newlines, JSON.parse per line (the limit)', true),
  raw('raw-split', 'node:http GET, split on newlines, no parse', false),
  ravenDecode('raven-decode', 'Raven decodeWatchEvents over KubeClient.stream', {}, all),
  ravenDecode(
    'raven-decode-drop-mf',
    'Raven decodeWatchEvents, dropManagedFields',
    { dropManagedFields: true },
    all,
  ),
  ravenDecode(
    'raven-decode-filter',
    'Raven decodeWatchEvents, pre-parse filter keeping 1 namespace in 10',
    { filter: (peek) => peek.namespace === kept },
    oneInTen,
  ),
  ravenWatch(
    'raven-watch',
    "Raven `watch()` with its defaults (what the README's tour runs): keeps every object for `previous` and tombstones",
    {},
  ),
  ravenWatch('raven-watch-resource', 'Raven `watchResource()` with its defaults, every namespace', {
    scoped: true,
  }),
  ravenWatch('raven-watch-drop-mf', 'Raven `watch()`, `dropManagedFields: true`', {
    dropManagedFields: true,
  }),
  ravenWatch('raven-watch-nokeep', 'Raven `watch()`, `keepObjects: false`', { keepObjects: false }),
  ravenWatch(
    'raven-watch-previous',
    'Raven `watch()` with its defaults, the consumer reading `previous` of every `modified`',
    { readPrevious: true },
  ),
  clientNodeWatch,
  clientNodeInformer,
  fluentWatch,
];

export function contestantNamed(name: string): Contestant {
  const found = contestants.find((c) => c.name === name);
  if (found === undefined) {
    throw new Error(`unknown contestant ${name}; one of ${contestants.map((c) => c.name).join(', ')}`);
  }
  return found;
}
