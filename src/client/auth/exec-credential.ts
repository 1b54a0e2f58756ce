/**
 * The ExecCredential protocol of client.authentication.k8s.io (v1 and v1beta1): the request
 * passed to a plugin in KUBERNETES_EXEC_INFO, and validation of what it prints on stdout.
 */
import type { ExecConfig, InteractiveMode } from '../kubeconfig-file.js';

export const execApiVersions = [
  'client.authentication.k8s.io/v1',
  'client.authentication.k8s.io/v1beta1',
] as const;

/** Cluster details passed to plugins that set `provideClusterInfo`. */
export interface ExecClusterInfo {
  server: string;
  /** PEM text of the CA bundle. */
  certificateAuthority?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
  /** The cluster's `client.authentication.k8s.io/exec` extension. */
  config?: unknown;
}

/** What a plugin returned: credentials and when they stop being valid (epoch ms). */
export interface ExecResult {
  token?: string;
  cert?: string;
  key?: string;
  expiresAt?: number;
}

/**
 * Check an exec stanza before it is used; returns the offending field and a message, or undefined.
 * v1 made `interactiveMode` mandatory; v1beta1 defaults it to IfAvailable.
 */
export function checkExecConfig(exec: ExecConfig): { field: string; message: string } | undefined {
  if (exec.apiVersion === undefined) {
    return { field: 'apiVersion', message: `is required; use one of ${execApiVersions.join(', ')}` };
  }
  if (!(execApiVersions as readonly string[]).includes(exec.apiVersion)) {
    return {
      field: 'apiVersion',
      message: `unsupported exec plugin apiVersion ${JSON.stringify(exec.apiVersion)}; use one of ${execApiVersions.join(', ')}`,
    };
  }
  if (exec.apiVersion.endsWith('/v1') && exec.interactiveMode === undefined) {
    return {
      field: 'interactiveMode',
      message: 'is required for client.authentication.k8s.io/v1 (Never, IfAvailable or Always)',
    };
  }
  return undefined;
}

/** The effective interactive mode: v1beta1 defaults to IfAvailable. */
export function interactiveModeOf(exec: ExecConfig): InteractiveMode {
  return exec.interactiveMode ?? 'IfAvailable';
}

/** The KUBERNETES_EXEC_INFO document. */
export function execInfo(
  exec: ExecConfig,
  interactive: boolean,
  cluster: ExecClusterInfo | undefined,
): string {
  const spec: Record<string, unknown> = { interactive };
  if (exec.provideClusterInfo && cluster !== undefined) {
    spec.cluster = {
      server: cluster.server,
      ...(cluster.tlsServerName === undefined ? {} : { 'tls-server-name': cluster.tlsServerName }),
      ...(cluster.insecureSkipTlsVerify === true ? { 'insecure-skip-tls-verify': true } : {}),
      ...(cluster.certificateAuthority === undefined
        ? {}
        : { 'certificate-authority-data': Buffer.from(cluster.certificateAuthority).toString('base64') }),
      ...(cluster.proxyUrl === undefined ? {} : { 'proxy-url': cluster.proxyUrl }),
      ...(cluster.config === undefined ? {} : { config: cluster.config }),
    };
  }
  return JSON.stringify({ apiVersion: exec.apiVersion, kind: 'ExecCredential', spec });
}

/** Parse and validate plugin stdout; throws a plain Error whose message says what is wrong. */
export function parseExecOutput(stdout: string, apiVersion: string): ExecResult {
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    throw new Error(`stdout is not JSON: ${JSON.stringify(stdout.trim().slice(0, 200))}`);
  }
  if (typeof doc !== 'object' || doc === null) throw new Error('stdout is not a JSON object');
  const cred = doc as { apiVersion?: unknown; kind?: unknown; status?: unknown };
  if (cred.kind !== 'ExecCredential')
    throw new Error(`kind is ${JSON.stringify(cred.kind)}, want "ExecCredential"`);
  if (cred.apiVersion !== apiVersion) {
    throw new Error(
      `apiVersion is ${JSON.stringify(cred.apiVersion)}, want ${JSON.stringify(apiVersion)} as configured`,
    );
  }
  if (typeof cred.status !== 'object' || cred.status === null) throw new Error('status is missing');
  const status = cred.status as Record<string, unknown>;
  const result: ExecResult = {};
  const token = optionalString(status, 'token');
  const cert = optionalString(status, 'clientCertificateData');
  const key = optionalString(status, 'clientKeyData');
  if ((cert === undefined) !== (key === undefined)) {
    throw new Error('status.clientCertificateData and status.clientKeyData must be given together');
  }
  if (token === undefined && cert === undefined) {
    throw new Error('status has neither token nor clientCertificateData/clientKeyData');
  }
  if (token !== undefined) result.token = token;
  if (cert !== undefined && key !== undefined) {
    result.cert = cert;
    result.key = key;
  }
  const expiry = optionalString(status, 'expirationTimestamp');
  if (expiry !== undefined) {
    const ms = Date.parse(expiry);
    if (Number.isNaN(ms))
      throw new Error(`status.expirationTimestamp ${JSON.stringify(expiry)} is not a timestamp`);
    result.expiresAt = ms;
  }
  return result;
}

function optionalString(obj: Record<string, unknown>, key: string): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new Error(`status.${key} must be a string`);
  return value;
}
