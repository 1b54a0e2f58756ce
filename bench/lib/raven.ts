/**
 * Raven as the benchmarks load it: the compiled JavaScript in ../dist (run `npm run build` first;
 * `npm run bench` does), so Raven runs as users run it and as the peers run (compiled JS), with no
 * on-the-fly TypeScript transform. The types come from ../src, so type-checking needs no build.
 * RAVEN_BENCH_DIST=/path/to/dist loads another build instead (an earlier commit, for a before and
 * after comparison).
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

type KubeClientModule = typeof import('../../src/client/kube-client.js');
type LoadConfigModule = typeof import('../../src/client/load-config.js');
type DecodeWatchModule = typeof import('../../src/watch/decode/decode-watch-events.js');
type WatcherModule = typeof import('../../src/watch/watcher.js');
type WatchResourceModule = typeof import('../../src/watch/watch-resource.js');
type InformerModule = typeof import('../../src/informer/informer.js');
type SharedInformersModule = typeof import('../../src/informer/shared-informers.js');

export interface Raven {
  KubeClient: KubeClientModule['KubeClient'];
  loadConfig: LoadConfigModule['loadConfig'];
  decodeWatchEvents: DecodeWatchModule['decodeWatchEvents'];
  watch: WatcherModule['watch'];
  watchResource: WatchResourceModule['watchResource'];
  Informer: InformerModule['Informer'];
  SharedInformers: SharedInformersModule['SharedInformers'];
}

/** The dist/ directory Raven is loaded from, as a URL ending in a slash. */
export const ravenDist: URL = (() => {
  const explicit = process.env.RAVEN_BENCH_DIST;
  if (explicit === undefined || explicit === '') return new URL('../../dist/', import.meta.url);
  const path = isAbsolute(explicit) ? explicit : resolve(explicit);
  return pathToFileURL(path.endsWith('/') ? path : `${path}/`);
})();

/**
 * Extra node flags for the daemons a suite starts (RAVEN_BENCH_DAEMON_NODE_FLAGS, split on
 * spaces), e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile them where they are measured.
 */
export function daemonNodeFlags(): string[] {
  return (process.env.RAVEN_BENCH_DAEMON_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
}

/** Import one compiled module of Raven's by its path under dist/ (internal ones too). */
export async function load<T>(path: string): Promise<T> {
  return (await import(new URL(path, ravenDist).href)) as T;
}

/** Import Raven's modules from dist. */
export async function loadRaven(): Promise<Raven> {
  const [client, config, decode, watcher, resource, informer, shared] = await Promise.all([
    load<KubeClientModule>('client/kube-client.js'),
    load<LoadConfigModule>('client/load-config.js'),
    load<DecodeWatchModule>('watch/decode/decode-watch-events.js'),
    load<WatcherModule>('watch/watcher.js'),
    load<WatchResourceModule>('watch/watch-resource.js'),
    load<InformerModule>('informer/informer.js'),
    load<SharedInformersModule>('informer/shared-informers.js'),
  ]);
  return {
    KubeClient: client.KubeClient,
    loadConfig: config.loadConfig,
    decodeWatchEvents: decode.decodeWatchEvents,
    watch: watcher.watch,
    watchResource: resource.watchResource,
    Informer: informer.Informer,
    SharedInformers: shared.SharedInformers,
  };
}

/** A client for the cluster a kubeconfig file describes. */
export async function ravenClient(
  raven: Raven,
  kubeconfig: string,
): Promise<InstanceType<Raven['KubeClient']>> {
  return new raven.KubeClient(await raven.loadConfig({ kubeconfig }));
}
