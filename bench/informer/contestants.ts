/**
 * The informer contestants: each lists the pod server's collection into a cache and then applies
 * every watch event to it, handing each change to a handler that counts. They resolve with the
 * number of changes handled (one per listed pod, then one per event).
 */
import { get } from 'node:http';
import { clientNodeConfig, loadClientNode, loadFluentClient, type KubeObjectLike } from '../lib/peers.js';
import { EXPIRED_RESOURCE_VERSION } from '../lib/pod-server.js';
import { loadRaven, ravenClient } from '../lib/raven.js';

export interface InformerTarget {
  url: string;
  kubeconfig: string;
  listed: number;
  events: number;
}

export interface Contestant {
  name: string;
  description: string;
  node22?: boolean;
  /** Changes the handler must see; default every listed pod and every event. */
  expected?(target: InformerTarget): number;
  prepare(target: InformerTarget): Promise<() => Promise<number>>;
}

const PATH = '/api/v1/pods';
const PODS = { group: '', version: 'v1', resource: 'pods', namespaced: true };

const keyOf = (o: KubeObjectLike): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** GET and JSON.parse a whole body. */
function getJson(url: string): Promise<{ metadata: { resourceVersion: string }; items: KubeObjectLike[] }> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as never);
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
      res.on('error', reject);
    }).on('error', reject);
  });
}

/** The floor: one list, JSON.parse, items into a Map; then the watch, each line parsed into the Map. */
const rawMap: Contestant = {
  name: 'raw-map',
  description:
    'node:http: one unpaginated list, `JSON.parse`d, items into a `Map`; then the watch, split and parsed into it',
  prepare: (target) =>
    Promise.resolve(async () => {
      const cache = new Map<string, KubeObjectLike>();
      const list = await getJson(`${target.url}${PATH}`);
      for (const item of list.items) cache.set(keyOf(item), item);
      let count = cache.size;
      await new Promise<void>((resolve, reject) => {
        get(`${target.url}${PATH}?watch=true&resourceVersion=${list.metadata.resourceVersion}`, (res) => {
          let pending = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            pending += chunk;
            let start = 0;
            for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n', start)) {
              const event = JSON.parse(pending.slice(start, nl)) as { type: string; object: KubeObjectLike };
              if (event.type === 'DELETED') cache.delete(keyOf(event.object));
              else cache.set(keyOf(event.object), event.object);
              count++;
              start = nl + 1;
            }
            pending = pending.slice(start);
          });
          res.on('end', resolve);
          res.on('error', reject);
        }).on('error', reject);
      });
      return count;
    }),
};

/** Count add and update handler calls until every change has been handled. */
function counter(expected: number): { seen: () => void; done: Promise<number> } {
  let count = 0;
  let resolve!: (n: number) => void;
  const done = new Promise<number>((r) => (resolve = r));
  return {
    seen: () => {
      if (++count === expected) resolve(count);
    },
    done,
  };
}

function ravenShared(
  name: string,
  description: string,
  watcher: { dropManagedFields?: boolean },
): Contestant {
  return {
    name,
    description,
    prepare: async (target) => {
      const raven = await loadRaven();
      const client = await ravenClient(raven, target.kubeconfig);
      return async () => {
        const lifetime = new AbortController();
        const informers = new raven.SharedInformers({ transport: client, watcher });
        const pods = informers.informerFor({ resource: PODS });
        const { seen, done } = counter(target.listed + target.events);
        pods.addEventHandler({ add: seen, update: seen });
        informers.start(lifetime.signal);
        const count = await done;
        lifetime.abort();
        await client.destroy();
        return count;
      };
    },
  };
}

/** An `Informer` over a `watchResource()` with the watcher's own defaults. */
const ravenInformerWatch: Contestant = {
  name: 'raven-informer-over-watch',
  description:
    "Raven `Informer` over `watchResource()` with the watcher's defaults (keeps a copy of every object as well)",
  prepare: async (target) => {
    const raven = await loadRaven();
    const client = await ravenClient(raven, target.kubeconfig);
    return async () => {
      const lifetime = new AbortController();
      const informer = new raven.Informer({
        source: () => raven.watchResource({ transport: client, resource: PODS }),
      });
      const { seen, done } = counter(target.listed + target.events);
      informer.addEventHandler({ add: seen, update: seen });
      void informer.run(lifetime.signal);
      const count = await done;
      lifetime.abort();
      await client.destroy();
      return count;
    };
  },
};

const clientNodeInformer: Contestant = {
  name: 'client-node-informer',
  description: "@kubernetes/client-node's informer (one unpaginated list into its cache, then watch)",
  prepare: async (target) => {
    const { makeInformer, CoreV1Api } = await loadClientNode();
    const config = await clientNodeConfig(target.kubeconfig);
    const api = config.makeApiClient(CoreV1Api);
    return async () => {
      const informer = makeInformer(config, PATH, () => api.listPodForAllNamespaces());
      const { seen, done } = counter(target.listed + target.events);
      informer.on('add', seen);
      informer.on('update', seen);
      informer.on('error', (err) => {
        throw err instanceof Error ? err : new Error(String(err));
      });
      await informer.start();
      const count = await done;
      await informer.stop();
      return count;
    };
  },
};

const fluentWatch: Contestant = {
  name: 'fluent-watch',
  description: "kubernetes-fluent-client's Watch (list into its cache, then watch)",
  node22: true,
  prepare: async (target) => {
    process.env.KUBECONFIG = target.kubeconfig;
    const { K8s, kind } = await loadFluentClient();
    return async () => {
      const { seen, done } = counter(target.listed + target.events);
      const watcher = K8s(kind.Pod).Watch((_object, phase) => {
        if (phase === 'ADDED' || phase === 'MODIFIED') seen();
      });
      await watcher.start();
      const count = await done;
      watcher.close();
      return count;
    };
  },
};

/** The floor of a relist: GET the whole list and `JSON.parse` it. */
const parseList: Contestant = {
  name: 'parse-list',
  description:
    'node:http: GET the whole list and `JSON.parse` it (what a relist that parses every item costs)',
  expected: () => 0,
  prepare: (target) =>
    Promise.resolve(async () => {
      const list = await getJson(`${target.url}${PATH}`);
      if (list.items.length !== target.listed) throw new Error(`listed ${list.items.length} pods`);
      return 0;
    }),
};

/**
 * A relist of an unchanged collection: a watcher that knows every listed pod at its
 * resourceVersion (a resume, decoded before the clock starts) is told its resourceVersion expired
 * and relists; it must deliver nothing. `watchList`: the relist is a streaming list, else pages.
 */
function ravenRelist(name: string, description: string, watchList: boolean): Contestant {
  return {
    name,
    description,
    expected: () => 0,
    prepare: async (target) => {
      const raven = await loadRaven();
      const client = await ravenClient(raven, target.kubeconfig);
      // What a watcher needs to know of each object to tell a relist's unchanged items: its key,
      // uid and resourceVersion (a watcher keeps the rest off the heap, or not at all). Read in
      // pages: one parse of the whole list holds about 700 MiB of heap at once, after which V8 keeps
      // its young generation at the maximum, and with a live heap of 35 MiB it then started
      // incremental marking every 150 ms or so throughout the timed relist (29 mark-compacts in a
      // streaming relist of 50,000 pods, Node 24): the cost of this preparation, not of the relist.
      const items: KubeObjectLike[] = [];
      let next = '';
      do {
        const page = await getJson(`${target.url}${PATH}?limit=500${next && `&continue=${next}`}`);
        for (const item of page.items) {
          items.push({
            metadata: {
              namespace: item.metadata?.namespace,
              name: item.metadata?.name,
              uid: item.metadata?.uid,
              resourceVersion: item.metadata?.resourceVersion,
            },
          });
        }
        next = (page.metadata as { continue?: string }).continue ?? '';
      } while (next !== '');
      return async () => {
        const watcher = raven.watch({
          transport: client,
          path: PATH,
          watchList,
          resume: { resourceVersion: EXPIRED_RESOURCE_VERSION, objects: items as never[] },
        });
        let changes = 0;
        for await (const event of watcher) {
          if (event.type === 'synced') break;
          if (event.type === 'added' || event.type === 'modified' || event.type === 'deleted') changes++;
          if (
            event.type === 'error' &&
            event.status.relists === 0 &&
            !/expired|too old/i.test(event.error.message)
          )
            throw event.error;
        }
        if (watcher.status().relists !== 1)
          throw new Error(`${watcher.status().relists} relists, expected 1`);
        await client.destroy();
        return changes;
      };
    },
  };
}

export const contestants: readonly Contestant[] = [
  parseList,
  ravenRelist(
    'raven-relist',
    'Raven `watch()` relisting an unchanged collection it knows (paginated list, 500 per page)',
    false,
  ),
  ravenRelist(
    'raven-relist-stream',
    'Raven `watch()` relisting an unchanged collection it knows (streaming list)',
    true,
  ),
  rawMap,
  ravenShared(
    'raven-informer',
    'Raven `SharedInformers` with its defaults (managedFields dropped while decoding; the watcher keeps no copy)',
    {},
  ),
  ravenShared(
    'raven-informer-mf',
    'Raven `SharedInformers` keeping managedFields (`watcher: { dropManagedFields: false }`)',
    { dropManagedFields: false },
  ),
  ravenInformerWatch,
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
