/**
 * The client layer's public surface: configuration, auth, the apiserver client, discovery and
 * REST. Re-exports only; `src/index.ts` can re-export this module.
 */
export { loadConfig, type LoadConfigOptions } from './load-config.js';
export {
  loadKubeconfig,
  readKubeconfigFiles,
  resolveKubeconfig,
  type KubeconfigOptions,
} from './kubeconfig.js';
export {
  parseKubeconfig,
  readKubeconfigFile,
  type ExecConfig,
  type InteractiveMode,
} from './kubeconfig-file.js';
export { mergeKubeconfigs, type MergedKubeconfig } from './kubeconfig-merge.js';
export { loadInClusterConfig, serviceAccountDir, type InClusterOptions } from './in-cluster.js';
export { describeSource, type ConfigSource, type ResolvedConfig, type TlsConfig } from './resolved-config.js';
export { anonymousAuth, type AuthProvider, type Credentials } from './auth/auth-provider.js';
export { TokenAuth } from './auth/token-auth.js';
export { TokenFileAuth, type TokenFileAuthOptions } from './auth/token-file-auth.js';
export { ClientCertificateAuth, type CertificatePair } from './auth/client-certificate-auth.js';
export { BasicAuth } from './auth/basic-auth.js';
export { ExecAuth, type ExecAuthOptions } from './auth/exec-auth.js';
export type { ExecClusterInfo } from './auth/exec-credential.js';
export { combineAuth } from './auth/combined-auth.js';
export {
  KubeClient,
  type KubeClientOptions,
  type RequestOptions,
  type StreamOptions,
  type StreamResponse,
} from './kube-client.js';
export { withQuery, type Query } from './request-path.js';
export { Discovery, type DiscoveryOptions, type DiscoveryRequester } from './discovery.js';
export {
  groupVersion,
  qualifiedName,
  type ApiResource,
  type ApiSubresource,
  type ResolvedResource,
} from './api-resource.js';
export { UnknownResourceError } from './unknown-resource-error.js';
export { resourcePath, type PathOptions, type ResourceRef } from './resource-path.js';
export {
  ResourceClient,
  type DeleteObjectOptions,
  type KubeList,
  type KubeObject,
  type KubeStatusLike,
  type ListOptions,
  type PatchOptions,
  type PatchType,
  type ResourceRequester,
  type WriteOptions,
} from './resource-client.js';
export { defaultUserAgent, version } from './version.js';
