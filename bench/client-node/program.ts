/**
 * The one program of the client-node suite, written against @kubernetes/client-node's API and
 * run on each of its modules unchanged: a KubeConfig from a file, an informer of every pod, a
 * handler counting adds and updates, `start()`, then `stop()` once every change was counted.
 */
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { repoRoot } from '../lib/child.js';
import type { ClientNode } from '../lib/peers.js';
import { loadClientNode } from '../lib/peers.js';
import { load } from '../lib/raven.js';

export interface Target {
  kubeconfig: string;
  /** Changes the handler must see: every listed pod, then every event. */
  expected: number;
}

/** The modules the program runs on, by contestant name. */
export const modules: Record<string, { description: string; node22?: boolean; load(): Promise<ClientNode> }> =
  {
    'client-node': {
      description: "@kubernetes/client-node's own informer, the version bench/package.json installs",
      node22: true,
      load: loadClientNode,
    },
    'client-node-1.4': {
      description:
        "@kubernetes/client-node 1.4's own informer (the package's devDependency; runs on Node 20)",
      load: async () =>
        (await import(
          pathToFileURL(join(repoRoot, 'node_modules', '@kubernetes', 'client-node', 'dist', 'index.js')).href
        )) as ClientNode,
    },
    'kube-raven/client-node': {
      description: "client-node's names, Raven's `makeInformer` underneath",
      load: () => load<ClientNode>('client-node/index.js'),
    },
  };

/** The program on `k8s`, its KubeConfig loaded: run it until every change was handled; resolves with the count. */
export function informerProgram(k8s: ClientNode, target: Target): () => Promise<number> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(target.kubeconfig);
  const api = kc.makeApiClient(k8s.CoreV1Api);
  return async () => {
    const informer = k8s.makeInformer(kc, '/api/v1/pods', () => api.listPodForAllNamespaces());
    let count = 0;
    let finish!: (err?: unknown) => void;
    const done = new Promise<void>((resolve, reject) => {
      finish = (err) =>
        err === undefined ? resolve() : reject(err instanceof Error ? err : new Error(JSON.stringify(err)));
    });
    const seen = (): void => {
      if (++count === target.expected) finish();
    };
    informer.on('add', seen);
    informer.on('update', seen);
    // A failure before every change was counted fails the run; client-node 2 also reports its own
    // stop() (the aborted request) here, after the count, which settles nothing.
    informer.on('error', (err) => finish(err ?? new Error('informer error')));
    await informer.start();
    await done;
    await informer.stop();
    return count;
  };
}
