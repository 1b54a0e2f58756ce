/**
 * The peers, loaded from bench/node_modules (`npm --prefix bench install`). They are imported by
 * name at run time and described here by the small part of their API the benchmarks use, so that
 * type-checking and linting the repository never needs them installed.
 */

/** The fields the benchmarks read, as each peer gives them (a field may be present as undefined). */
export interface KubeObjectLike {
  metadata?: {
    name?: string | undefined;
    namespace?: string | undefined;
    uid?: string | undefined;
    resourceVersion?: string | undefined;
  };
}

export interface ClientNodeKubeConfig {
  loadFromFile(path: string): void;
  makeApiClient<T>(api: new (...args: never[]) => T): T;
}

export interface ClientNodeInformer {
  on(verb: 'add' | 'update' | 'delete', cb: (obj: KubeObjectLike) => void): void;
  on(verb: 'error', cb: (err: unknown) => void): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface ClientNodeCoreV1Api {
  listPodForAllNamespaces(): Promise<{ items: unknown[] }>;
  listNamespacedConfigMap(param: { namespace: string }): Promise<{ items: unknown[] }>;
}

export interface ClientNode {
  KubeConfig: new () => ClientNodeKubeConfig;
  CoreV1Api: new (...args: never[]) => ClientNodeCoreV1Api;
  Watch: new (config: ClientNodeKubeConfig) => {
    watch(
      path: string,
      query: Record<string, string | number | boolean | undefined>,
      callback: (phase: string, object: KubeObjectLike) => void,
      done: (err: unknown) => void,
    ): Promise<AbortController>;
  };
  makeInformer: (
    config: ClientNodeKubeConfig,
    path: string,
    list: () => Promise<{ items: unknown[] }>,
  ) => ClientNodeInformer;
}

export interface FluentWatcher {
  start(): Promise<AbortController>;
  close(): void;
  events: { on(event: string, listener: (...args: unknown[]) => void): void };
}

export interface FluentClient {
  K8s: (
    model: unknown,
    filters?: { namespace?: string },
  ) => {
    Watch(callback: (object: KubeObjectLike, phase: string) => void, config?: object): FluentWatcher;
  };
  kind: { Pod: unknown; ConfigMap: unknown };
}

async function importPeer<T>(name: string): Promise<T> {
  return (await import(name)) as T;
}

export function loadClientNode(): Promise<ClientNode> {
  return importPeer<ClientNode>('@kubernetes/client-node');
}

/** It reads the kubeconfig from $KUBECONFIG on every request; set it before the first call. */
export function loadFluentClient(): Promise<FluentClient> {
  return importPeer<FluentClient>('kubernetes-fluent-client');
}

/** A client-node KubeConfig read from a file. */
export async function clientNodeConfig(kubeconfig: string): Promise<ClientNodeKubeConfig> {
  const { KubeConfig } = await loadClientNode();
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  return config;
}
