/**
 * `kube-raven/client-node`: @kubernetes/client-node's API with Raven's informer and watch
 * underneath. Everything client-node exports is re-exported unchanged (its `KubeConfig`, API
 * classes and models: client-node is an optional peer dependency, never bundled), except
 * `makeInformer` and `Watch`, which are Raven's: switching a program is one changed import.
 * The one `export *` of the package's entry points, on purpose (docs/layers.md).
 */
export * from '@kubernetes/client-node';
export {
  makeInformer,
  RavenInformer,
  type ClientNodeObject,
  type ObjectCallback,
  type ErrorCallback,
  type ListPromise,
  type ObjectVerb,
} from './informer.js';
export { Watch, type WatchCallback, type WatchDone, type WatchQuery } from './watch.js';
export { resolveClientNodeConfig, type KubeConfigLike } from './kube-config.js';
