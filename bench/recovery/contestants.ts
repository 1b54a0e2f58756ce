/**
 * The recovery contestants. Each watches the ConfigMaps of one namespace the way its users are
 * shown to, and reports to its `Observer` when it is ready and every state of the ticker ConfigMap
 * its handler receives (the ticker's `data.seq`, written by the suite every 200 ms). None of them
 * is tuned: defaults throughout, as in each library's own examples.
 */
import { clientNodeConfig, loadClientNode, loadFluentClient } from '../lib/peers.js';
import { ravenDist } from '../lib/raven.js';

export interface RecoveryTarget {
  kubeconfig: string;
  namespace: string;
}

export interface Observer {
  /** The contestant has listed the namespace and is watching. */
  ready(): void;
  /** The handler received this state of an object (a ConfigMap). */
  saw(object: object): void;
  /** The contestant stopped for good (it should never). */
  fail: (err: unknown) => void;
}

export interface Contestant {
  name: string;
  description: string;
  /** Start watching; runs until the process is killed. */
  start(target: RecoveryTarget, observer: Observer): Promise<void>;
}

type RavenApi = typeof import('../../src/index.js');

/** Raven's public API, the package's entry point in dist/ (what `import ... from 'kube-raven'` loads). */
async function loadRavenApi(): Promise<RavenApi> {
  return (await import(new URL('index.js', ravenDist).href)) as RavenApi;
}

/** The README's tour: loadConfig, KubeClient, Discovery, watchResource, one `for await` loop. */
const ravenWatch: Contestant = {
  name: 'raven-watch',
  description: "Raven's `watchResource` as the README's tour uses it (defaults)",
  start: async (target, observer) => {
    const { loadConfig, KubeClient, Discovery, watchResource } = await loadRavenApi();
    const client = new KubeClient(await loadConfig({ kubeconfig: target.kubeconfig }));
    const configMaps = await new Discovery(client).resolve('cm');
    const watcher = watchResource({
      transport: client,
      resource: configMaps,
      namespaces: [target.namespace],
    });
    const consume = async (): Promise<void> => {
      for await (const event of watcher) {
        if (event.type === 'synced') observer.ready();
        else if (event.type === 'initial' || event.type === 'added' || event.type === 'modified')
          observer.saw(event.object);
      }
      throw new Error('the watcher ended by itself');
    };
    consume().catch(observer.fail);
  },
};

/** An `Informer` over the same `watchResource`, with add and update handlers. */
const ravenInformer: Contestant = {
  name: 'raven-informer',
  description: "Raven's `Informer` over `watchResource`, add and update handlers (defaults)",
  start: async (target, observer) => {
    const { loadConfig, KubeClient, Discovery, watchResource, Informer } = await loadRavenApi();
    const client = new KubeClient(await loadConfig({ kubeconfig: target.kubeconfig }));
    const configMaps = await new Discovery(client).resolve('cm');
    const informer = new Informer({
      name: 'configmaps',
      source: () =>
        watchResource({ transport: client, resource: configMaps, namespaces: [target.namespace] }),
    });
    informer.addEventHandler({
      add: (object) => observer.saw(object),
      update: (_old, object) => observer.saw(object),
    });
    informer
      .run(new AbortController().signal)
      .then(() => observer.fail(new Error('the informer ended by itself')), observer.fail);
    informer.waitForSync().then(() => observer.ready(), observer.fail);
  },
};

/**
 * client-node's informer as its own example runs it: on an error the informer stops, and the
 * example starts it again after 5 s.
 */
const clientNodeInformer: Contestant = {
  name: 'client-node-informer',
  description:
    "@kubernetes/client-node's informer, restarted 5 s after an error as the library's informer example does",
  start: async (target, observer) => {
    const { makeInformer, CoreV1Api } = await loadClientNode();
    const config = await clientNodeConfig(target.kubeconfig);
    const api = config.makeApiClient(CoreV1Api);
    const informer = makeInformer(config, `/api/v1/namespaces/${target.namespace}/configmaps`, () =>
      api.listNamespacedConfigMap({ namespace: target.namespace }),
    );
    informer.on('add', (object) => observer.saw(object));
    informer.on('update', (object) => observer.saw(object));
    informer.on('error', () => {
      setTimeout(() => void informer.start().catch(() => undefined), 5000);
    });
    await informer.start();
    observer.ready();
  },
};

/** kubernetes-fluent-client's Watch (list, then watch, with its own reconnection), defaults. */
const fluentWatch: Contestant = {
  name: 'fluent-watch',
  description: "kubernetes-fluent-client's `Watch` (its own list, cache and reconnection; defaults)",
  start: async (target, observer) => {
    process.env.KUBECONFIG = target.kubeconfig;
    const { K8s, kind } = await loadFluentClient();
    const watcher = K8s(kind.ConfigMap, { namespace: target.namespace }).Watch((object) =>
      observer.saw(object),
    );
    watcher.events.on('connect', () => observer.ready());
    await watcher.start();
  },
};

export const contestants: readonly Contestant[] = [
  ravenWatch,
  ravenInformer,
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
