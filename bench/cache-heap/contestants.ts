/**
 * The cache-heap contestants: each lists the namespace's pods into whatever it keeps (an informer's
 * store, a watcher's memory of known objects, client-node's informer cache, or a plain parsed list
 * as the baseline) and stays synced while the heap is measured.
 *
 * `setup` loads the modules and builds the client (part of the heap baseline); `start` is what the
 * measured delta and the time to synced cover.
 */
import { clientNodeConfig, loadClientNode, type ClientNodeInformer } from '../lib/peers.js';
import { loadRaven, ravenDist, type Raven } from '../lib/raven.js';

export interface CacheTarget {
  kubeconfig: string;
  namespace: string;
}

export interface Session {
  /** Resolves once synced. */
  synced: Promise<void>;
  /** Objects the cache holds now (reading it also keeps the cache reachable until measured). */
  held(): number;
}

export interface Contestant {
  name: string;
  description: string;
  setup(target: CacheTarget): Promise<{ start(): Session }>;
}

type InformerModule = typeof import('../../src/informer/informer.js');
type DropModule = typeof import('../../src/watch/decode/drop-managed-fields.js');
type FreezeMode = import('../../src/cache/deep-freeze.js').FreezeMode;

/** Raven's informer and the managedFields transform, from dist/ as bench/lib/raven.ts loads the rest. */
async function loadRavenCache(): Promise<{
  raven: Raven;
  Informer: InformerModule['Informer'];
  dropManagedFields: DropModule['dropManagedFields'];
}> {
  const [raven, informer, drop] = await Promise.all([
    loadRaven(),
    import(new URL('informer/informer.js', ravenDist).href) as Promise<InformerModule>,
    import(new URL('watch/decode/drop-managed-fields.js', ravenDist).href) as Promise<DropModule>,
  ]);
  return { raven, Informer: informer.Informer, dropManagedFields: drop.dropManagedFields };
}

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

interface InformerVariant {
  freeze: FreezeMode;
  /** The store's transform. */
  transform: boolean;
  /** The watcher's option: managedFields skipped while decoding. */
  watcherDrop: boolean;
  keepObjects?: boolean;
}

function ravenInformer(name: string, description: string, variant: InformerVariant): Contestant {
  return {
    name,
    description,
    setup: async (target) => {
      const { raven, Informer, dropManagedFields } = await loadRavenCache();
      const transport = new raven.KubeClient(await raven.loadConfig({ kubeconfig: target.kubeconfig }));
      const path = `/api/v1/namespaces/${target.namespace}/pods`;
      return {
        start: () => {
          const informer = new Informer({
            name: 'pods',
            freeze: variant.freeze,
            ...(variant.transform ? { transform: dropManagedFields } : {}),
            source: () =>
              raven.watch({
                transport,
                path,
                dropManagedFields: variant.watcherDrop,
                keepObjects: variant.keepObjects ?? true,
              }),
          });
          // Never aborted: the run's process exits once the heap is measured.
          const lifetime = new AbortController();
          const synced = deferred();
          informer.run(lifetime.signal).catch(synced.reject);
          informer.waitForSync().then(synced.resolve, synced.reject);
          return { synced: synced.promise, held: () => informer.store.size };
        },
      };
    },
  };
}

function ravenWatcher(name: string, description: string, keepObjects: boolean): Contestant {
  return {
    name,
    description,
    setup: async (target) => {
      const raven = await loadRaven();
      const transport = new raven.KubeClient(await raven.loadConfig({ kubeconfig: target.kubeconfig }));
      return {
        start: () => {
          const watcher = raven.watch({
            transport,
            path: `/api/v1/namespaces/${target.namespace}/pods`,
            keepObjects,
          });
          const synced = deferred();
          const consume = async (): Promise<void> => {
            for await (const event of watcher) {
              if (event.type === 'synced') synced.resolve();
              else if (event.type === 'error')
                process.stderr.write(`watcher error: ${event.error.message}\n`);
            }
          };
          consume().catch(synced.reject);
          return { synced: synced.promise, held: () => watcher.status().objects };
        },
      };
    },
  };
}

/**
 * The informer as most programs get one: from `SharedInformers` with its defaults (the watcher
 * decodes without managedFields and keeps no copy; the store has the objects).
 */
const sharedInformers: Contestant = {
  name: 'raven-shared-informers',
  description: '`SharedInformers` with its defaults: `informerFor(pods in the namespace)`, nothing set',
  setup: async (target) => {
    const raven = await loadRaven();
    const transport = new raven.KubeClient(await raven.loadConfig({ kubeconfig: target.kubeconfig }));
    return {
      start: () => {
        const informers = new raven.SharedInformers({ transport });
        const pods = informers.informerFor({
          resource: { group: '', version: 'v1', resource: 'pods', namespaced: true },
          namespaces: target.namespace,
        });
        // Never aborted: the run's process exits once the heap is measured.
        informers.start(new AbortController().signal);
        return { synced: informers.waitForSync(), held: () => pods.store.size };
      },
    };
  },
};

/** client-node's informer also offers the cache it keeps. */
interface ClientNodeCachingInformer extends ClientNodeInformer {
  list(namespace?: string): unknown[];
}

interface PodApi {
  listNamespacedPod(param: { namespace: string }): Promise<{ items: unknown[] }>;
}

const clientNodeInformer: Contestant = {
  name: 'client-node-informer',
  description:
    "@kubernetes/client-node's informer (`makeInformer`: one unpaginated list into its cache, then watch)",
  setup: async (target) => {
    const { makeInformer, CoreV1Api } = await loadClientNode();
    const config = await clientNodeConfig(target.kubeconfig);
    const api = config.makeApiClient(CoreV1Api) as unknown as PodApi;
    return {
      start: () => {
        const informer = makeInformer(config, `/api/v1/namespaces/${target.namespace}/pods`, () =>
          api.listNamespacedPod({ namespace: target.namespace }),
        ) as ClientNodeCachingInformer;
        const synced = deferred();
        informer.on('error', synced.reject);
        // start() resolves once the list is in the cache and the watch is open.
        informer.start().then(synced.resolve, synced.reject);
        return { synced: synced.promise, held: () => informer.list().length };
      },
    };
  },
};

/** The floor: one unpaginated list through Raven's client, its parsed items kept as they are. */
const parsedList: Contestant = {
  name: 'baseline-parsed-list',
  description: 'baseline: one unpaginated list, `JSON.parse`d, the items array kept (no watch, no cache)',
  setup: async (target) => {
    const raven = await loadRaven();
    const client = new raven.KubeClient(await raven.loadConfig({ kubeconfig: target.kubeconfig }));
    return {
      start: () => {
        let items: unknown[] = [];
        const synced = client
          .request<{ items: unknown[] }>({
            method: 'GET',
            path: `/api/v1/namespaces/${target.namespace}/pods`,
          })
          .then((list) => {
            items = list.items;
          });
        return { synced, held: () => items.length };
      },
    };
  },
};

export const contestants: readonly Contestant[] = [
  parsedList,
  ravenInformer(
    'raven-informer',
    'Raven `Informer`, default store, not frozen (`freeze: never`, as NODE_ENV=production)',
    { freeze: 'never', transform: false, watcherDrop: false },
  ),
  ravenInformer(
    'raven-informer-frozen',
    'the same with `freeze: always` (the default outside NODE_ENV=production)',
    { freeze: 'always', transform: false, watcherDrop: false },
  ),
  ravenInformer(
    'raven-informer-transform',
    'the same with `transform: dropManagedFields` only (the watcher still keeps the full objects)',
    { freeze: 'never', transform: true, watcherDrop: false },
  ),
  ravenInformer(
    'raven-informer-drop',
    "`transform: dropManagedFields` and the watcher's `dropManagedFields: true` (skipped while decoding)",
    { freeze: 'never', transform: true, watcherDrop: true },
  ),
  ravenInformer(
    'raven-informer-transform-nokeep',
    '`transform: dropManagedFields` only, and the watcher keeps no objects (`keepObjects: false`; the store has them)',
    { freeze: 'never', transform: true, watcherDrop: false, keepObjects: false },
  ),
  sharedInformers,
  ravenWatcher(
    'raven-watcher-keep',
    'Raven `watch()` alone, `keepObjects: true` (the default), events discarded',
    true,
  ),
  ravenWatcher(
    'raven-watcher-nokeep',
    'Raven `watch()` alone, `keepObjects: false` (only name, resourceVersion and uid kept)',
    false,
  ),
  clientNodeInformer,
];

export function contestantNamed(name: string): Contestant {
  const found = contestants.find((c) => c.name === name);
  if (found === undefined) {
    throw new Error(`unknown contestant ${name}; one of ${contestants.map((c) => c.name).join(', ')}`);
  }
  return found;
}
