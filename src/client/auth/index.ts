/**
 * `kube-raven/auth`: the ways a client proves who it is, for code that builds a `KubeClient`
 * without a kubeconfig (`loadConfig()` picks one of these for you). Re-exports only; the
 * names and signatures are pinned by `api/kube-raven-auth.api.md`.
 */
export { anonymousAuth, type AuthProvider, type Credentials } from './auth-provider.js';
export { BasicAuth } from './basic-auth.js';
export { type CertificatePair, ClientCertificateAuth } from './client-certificate-auth.js';
export { combineAuth } from './combined-auth.js';
export { ExecAuth, type ExecAuthOptions } from './exec-auth.js';
export type { ExecClusterInfo } from './exec-credential.js';
export type { ExecConfig, InteractiveMode } from '../kubeconfig-file.js';
export { TokenAuth } from './token-auth.js';
export { TokenFileAuth, type TokenFileAuthOptions } from './token-file-auth.js';
