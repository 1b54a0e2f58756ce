/**
 * The decoding contestants. Each reads the watch stream of the local server and resolves with the
 * number of events it delivered to its consumer; the consumer does nothing but count, so the
 * numbers are the cost of getting from bytes to objects.
 */
import { get } from 'node:http';
import { NAMESPACES } from '../lib/pod-fixture.js';
import { clientNodeConfig, loadClientNode, loadFluentClient } from '../lib/peers.js';
import { loadRaven, ravenClient } from '../lib/raven.js';

export interface DecodeTarget {
  /** Base URL of the watch server. */
  url: string;
  /** A kubeconfig whose server is `url`. */
  kubeconfig: string;
  /** Events in the stream. */
  events: number;
}

export interface Contestant {
  name: string;
  description: string;
  /** Events the consumer should see; the run fails otherwise. */
  expected(target: DecodeTarget): number;
  /** Load modules and build clients (not timed); the returned function is timed. */
  prepare(target: DecodeTarget): Promise<() => Promise<number>>;
}

const PATH = '/api/v1/pods';
const all = (t: DecodeTarget): number => t.events;
/** The filter contestant keeps one namespace of ten. */
const kept = NAMESPACES[0] ?? '';
const oneInTen = (t: DecodeTarget): number => Math.ceil(t.events / NAMESPACES.length);

/** node:http, split on newlines, JSON.parse each line: the floor any decoder stands on. */
const raw: Contestant = {
  name: 'raw',
  description: 'node:http GET, split on newlines, JSON.parse per line (baseline)',
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
                const event = JSON.parse(pending.slice(start, nl)) as { type?: string };
                if (event.type !== undefined) count++;
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

/** The whole list+watch engine: list (empty), watch, resourceVersion tracking, known-objects map. */
const ravenWatcher: Contestant = {
  name: 'raven-watcher',
  description: "Raven's watcher: list+watch with the known-objects map (keeps every object)",
  expected: all,
  prepare: async (target) => {
    const raven = await loadRaven();
    const client = await ravenClient(raven, target.kubeconfig);
    return async () => {
      const expected = all(target);
      const watcher = raven.watch({ transport: client, path: PATH, watchList: false });
      let count = 0;
      for await (const event of watcher) {
        if (event.type === 'error') throw event.error;
        if (event.type === 'added' && ++count === expected) break;
      }
      await client.destroy();
      return count;
    };
  },
};

const clientNodeWatch: Contestant = {
  name: 'client-node-watch',
  description: "@kubernetes/client-node's Watch",
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
              if (phase === 'ADDED') count++;
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
        informer.on('add', () => {
          if (++count === expected) informer.stop().then(() => resolve(count), reject);
        });
        informer.on('error', (err) => reject(toError(err)));
        informer.start().catch(reject);
      });
  },
};

const fluentWatch: Contestant = {
  name: 'fluent-watch',
  description: "kubernetes-fluent-client's Watch (list, then watch into its cache)",
  expected: all,
  prepare: async (target) => {
    process.env.KUBECONFIG = target.kubeconfig;
    const { K8s, kind } = await loadFluentClient();
    return () =>
      new Promise<number>((resolve, reject) => {
        const expected = all(target);
        let count = 0;
        const watcher = K8s(kind.Pod).Watch((_object, phase) => {
          if (phase === 'ADDED' && ++count === expected) {
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
  raw,
  ravenDecode('raven-decode', 'Raven decodeWatchEvents over KubeClient.stream', {}, all),
  ravenDecode(
    'raven-drop-mf',
    'Raven decodeWatchEvents, dropManagedFields',
    { dropManagedFields: true },
    all,
  ),
  ravenDecode(
    'raven-filter',
    'Raven decodeWatchEvents, pre-parse filter keeping 1 namespace in 10',
    { filter: (peek) => peek.namespace === kept },
    oneInTen,
  ),
  ravenWatcher,
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
