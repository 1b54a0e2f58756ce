/**
 * The list+watch contestants: each lists every ConfigMap of the namespace into its cache until it
 * is synced, then receives a few live updates. Each returns when it has seen `updates` changes.
 */
import { clientNodeConfig, loadClientNode, loadFluentClient } from '../lib/peers.js';
import { loadRaven } from '../lib/raven.js';

export interface ListWatchTarget {
  kubeconfig: string;
  namespace: string;
  /** ConfigMaps in the namespace. */
  objects: number;
}

export interface Session {
  /** Resolves with the number of objects held when synced. */
  synced: Promise<number>;
  /** Resolves when `count` updates (of objects named `names`) have arrived. */
  updated(names: ReadonlySet<string>): Promise<void>;
  /** Whether the streaming initial list was used, where the contestant can say. */
  watchList(): boolean | undefined;
  stop(): Promise<void>;
}

export interface Contestant {
  name: string;
  description: string;
  /** Import the modules (not timed: loading a large client is not what is measured). */
  load(): Promise<unknown>;
  start(target: ListWatchTarget): Promise<Session>;
}

/** A promise with its settle functions, for callback-shaped clients. */
function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Counts updates of the named objects; `until` resolves once all have been seen. */
class UpdateWaiter {
  #names: ReadonlySet<string> | undefined;
  readonly #seen = new Set<string>();
  readonly #done = deferred<undefined>();

  until(names: ReadonlySet<string>): Promise<void> {
    this.#names = names;
    this.#check();
    return this.#done.promise;
  }

  saw(name: string | undefined): void {
    if (name === undefined || this.#names?.has(name) !== true) return;
    this.#seen.add(name);
    this.#check();
  }

  fail(err: unknown): void {
    this.#done.reject(err);
  }

  #check(): void {
    if (this.#names !== undefined && this.#seen.size === this.#names.size) this.#done.resolve(undefined);
  }
}

function ravenContestant(
  name: string,
  description: string,
  /** Left out: the watcher's default. */
  options: { watchList?: boolean; pageSize?: number },
): Contestant {
  return {
    name,
    description,
    load: loadRaven,
    start: async (target) => {
      const raven = await loadRaven();
      const client = new raven.KubeClient(await raven.loadConfig({ kubeconfig: target.kubeconfig }));
      const watcher = raven.watch({
        transport: client,
        path: `/api/v1/namespaces/${target.namespace}/configmaps`,
        ...options,
      });
      const synced = deferred<number>();
      const updates = new UpdateWaiter();
      const run = async (): Promise<void> => {
        for await (const event of watcher) {
          if (event.type === 'synced') synced.resolve(watcher.status().objects);
          else if (event.type === 'modified') updates.saw(event.object.metadata?.name);
          else if (event.type === 'error') process.stderr.write(`watcher error: ${event.error.message}\n`);
        }
      };
      run().catch((err: unknown) => {
        synced.reject(err);
        updates.fail(err);
      });
      return {
        synced: synced.promise,
        updated: (names) => updates.until(names),
        watchList: () => watcher.status().watchList,
        stop: async () => {
          watcher.close();
          await client.destroy();
        },
      };
    },
  };
}

const clientNodeInformer: Contestant = {
  name: 'client-node-informer',
  description: "@kubernetes/client-node's informer (one unpaginated list, then watch)",
  load: loadClientNode,
  start: async (target) => {
    const { makeInformer, CoreV1Api } = await loadClientNode();
    const config = await clientNodeConfig(target.kubeconfig);
    const api = config.makeApiClient(CoreV1Api);
    const informer = makeInformer(config, `/api/v1/namespaces/${target.namespace}/configmaps`, () =>
      api.listNamespacedConfigMap({ namespace: target.namespace }),
    );
    const synced = deferred<number>();
    const updates = new UpdateWaiter();
    let added = 0;
    informer.on('add', () => added++);
    informer.on('update', (object) => updates.saw(object.metadata?.name));
    informer.on('error', (err) => {
      synced.reject(err);
      updates.fail(err);
    });
    // start() resolves once the list has been applied and the watch is open.
    informer.start().then(() => synced.resolve(added), synced.reject);
    return {
      synced: synced.promise,
      updated: (names) => updates.until(names),
      watchList: () => false,
      stop: () => informer.stop(),
    };
  },
};

const fluentWatch: Contestant = {
  name: 'fluent-watch',
  description: "kubernetes-fluent-client's Watch (unpaginated list into its cache, then watch)",
  load: loadFluentClient,
  start: async (target) => {
    process.env.KUBECONFIG = target.kubeconfig;
    const { K8s, kind } = await loadFluentClient();
    const synced = deferred<number>();
    const updates = new UpdateWaiter();
    let added = 0;
    const watcher = K8s(kind.ConfigMap, { namespace: target.namespace }).Watch((object, phase) => {
      if (phase === 'ADDED' && ++added === target.objects) synced.resolve(added);
      else if (phase === 'MODIFIED') updates.saw(object.metadata?.name);
    });
    for (const failure of ['network_error', 'list_error', 'watch_error', 'data_error']) {
      watcher.events.on(failure, (err) => {
        synced.reject(err);
        updates.fail(err);
      });
    }
    watcher.start().catch(synced.reject);
    return {
      synced: synced.promise,
      updated: (names) => updates.until(names),
      watchList: () => false,
      stop: () => {
        watcher.close();
        return Promise.resolve();
      },
    };
  },
};

export const contestants: readonly Contestant[] = [
  ravenContestant(
    'raven-paged',
    "Raven's watcher, paginated list (500 per page, the default page size when a paginated list is chosen), then watch",
    {
      watchList: false,
    },
  ),
  ravenContestant('raven-paged-5000', "Raven's watcher, paginated list (5000 per page), then watch", {
    watchList: false,
    pageSize: 5000,
  }),
  ravenContestant(
    'raven-one-page',
    "Raven's watcher, the list in one page (pageSize 1,000,000: decoded as it arrives), then watch",
    { watchList: false, pageSize: 1_000_000 },
  ),
  ravenContestant(
    'raven-default',
    "Raven's watcher with its defaults (neither watchList nor pageSize given): on a server of 1.33 or later, one list in one page, then watch",
    {},
  ),
  ravenContestant(
    'raven-watchlist',
    "Raven's watcher with the streaming initial list (watchList: true, sendInitialEvents), then the same watch",
    { watchList: true },
  ),
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
