/**
 * One kubeconfig file, parsed and checked field by field. Relative file paths inside it are
 * resolved against the file's own directory here, so merged configs can mix files from several
 * places. File contents (certificates, tokens) are not read here: only the selected context's
 * files are read, later, so a stale entry for another cluster never breaks loading.
 */
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  at,
  fieldError,
  readArray,
  readBase64,
  readBoolean,
  readObject,
  readString,
  readStringArray,
  type FieldLocation,
} from './config-fields.js';

/** A named entry (cluster, context or user) and where it was defined. */
export interface Named<T> {
  name: string;
  value: T;
  /** Location of the entry's body, e.g. `clusters[0].cluster` in `/home/u/.kube/config`. */
  loc: FieldLocation;
}

export interface ClusterEntry {
  server?: string;
  certificateAuthority?: string;
  certificateAuthorityData?: string;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
  /** The `client.authentication.k8s.io/exec` extension, passed to exec plugins as `spec.cluster.config`. */
  execExtension?: unknown;
}

export interface ContextEntry {
  cluster?: string;
  user?: string;
  namespace?: string;
}

export type InteractiveMode = 'Never' | 'IfAvailable' | 'Always';

export interface ExecConfig {
  apiVersion?: string;
  command: string;
  args: string[];
  env: { name: string; value: string }[];
  installHint?: string;
  provideClusterInfo: boolean;
  interactiveMode?: InteractiveMode;
}

export interface UserEntry {
  clientCertificate?: string;
  clientCertificateData?: string;
  clientKey?: string;
  clientKeyData?: string;
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  exec?: ExecConfig;
  /** Set when the legacy `auth-provider` field is present (unsupported). */
  hasAuthProvider: boolean;
}

export interface KubeconfigFile {
  file: string;
  currentContext?: { name: string; loc: FieldLocation };
  clusters: Named<ClusterEntry>[];
  contexts: Named<ContextEntry>[];
  users: Named<UserEntry>[];
}

/** Read and parse `file`. A missing file rejects with the fs error (callers decide whether to skip). */
export async function readKubeconfigFile(file: string): Promise<KubeconfigFile> {
  const text = await readFile(file, 'utf8');
  return parseKubeconfig(text, file);
}

/** Parse kubeconfig YAML text; `file` names the source and anchors relative paths. */
export function parseKubeconfig(text: string, file: string): KubeconfigFile {
  const root: FieldLocation = { file, path: '' };
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw fieldError(root, `invalid YAML: ${(err as Error).message.split('\n')[0] ?? ''}`, err);
  }
  const obj = readObject(doc, root);
  const dir = dirname(file);
  const current = readString(obj, 'current-context', root);
  return {
    file,
    ...(current === undefined ? {} : { currentContext: { name: current, loc: at(root, 'current-context') } }),
    clusters: readNamed(obj, 'clusters', 'cluster', root, (o, loc) => parseCluster(o, loc, dir)),
    contexts: readNamed(obj, 'contexts', 'context', root, parseContext),
    users: readNamed(obj, 'users', 'user', root, (o, loc) => parseUser(o, loc, dir)),
  };
}

function readNamed<T>(
  obj: Record<string, unknown>,
  listKey: string,
  bodyKey: string,
  root: FieldLocation,
  parseBody: (body: Record<string, unknown>, loc: FieldLocation) => T,
): Named<T>[] {
  const listLoc = at(root, listKey);
  return readArray(obj[listKey], listLoc).map((item, i) => {
    const itemLoc = at(listLoc, i);
    const entry = readObject(item, itemLoc);
    const name = readString(entry, 'name', itemLoc);
    if (name === undefined) throw fieldError(at(itemLoc, 'name'), 'is required');
    const loc = at(itemLoc, bodyKey);
    return { name, value: parseBody(readObject(entry[bodyKey], loc), loc), loc };
  });
}

function resolvePath(path: string | undefined, dir: string): string | undefined {
  return path === undefined ? undefined : resolve(dir, path);
}

function parseCluster(o: Record<string, unknown>, loc: FieldLocation, dir: string): ClusterEntry {
  const extLoc = at(loc, 'extensions');
  const execExtension = readArray(o.extensions, extLoc)
    .map((e, i) => readObject(e, at(extLoc, i)))
    .find((e) => e.name === 'client.authentication.k8s.io/exec')?.extension;
  return strip({
    server: readString(o, 'server', loc),
    certificateAuthority: resolvePath(readString(o, 'certificate-authority', loc), dir),
    certificateAuthorityData: readBase64(o, 'certificate-authority-data', loc),
    insecureSkipTlsVerify: readBoolean(o, 'insecure-skip-tls-verify', loc) ?? false,
    tlsServerName: readString(o, 'tls-server-name', loc),
    proxyUrl: readString(o, 'proxy-url', loc),
    execExtension,
  });
}

function parseContext(o: Record<string, unknown>, loc: FieldLocation): ContextEntry {
  return strip({
    cluster: readString(o, 'cluster', loc),
    user: readString(o, 'user', loc),
    namespace: readString(o, 'namespace', loc),
  });
}

function parseUser(o: Record<string, unknown>, loc: FieldLocation, dir: string): UserEntry {
  const execLoc = at(loc, 'exec');
  return strip({
    clientCertificate: resolvePath(readString(o, 'client-certificate', loc), dir),
    clientCertificateData: readBase64(o, 'client-certificate-data', loc),
    clientKey: resolvePath(readString(o, 'client-key', loc), dir),
    clientKeyData: readBase64(o, 'client-key-data', loc),
    token: readString(o, 'token', loc),
    tokenFile: resolvePath(readString(o, 'tokenFile', loc), dir),
    username: readString(o, 'username', loc),
    password: readString(o, 'password', loc),
    exec:
      o.exec === undefined || o.exec === null
        ? undefined
        : parseExec(readObject(o.exec, execLoc), execLoc, dir),
    hasAuthProvider: o['auth-provider'] !== undefined && o['auth-provider'] !== null,
  });
}

const interactiveModes: readonly InteractiveMode[] = ['Never', 'IfAvailable', 'Always'];

function parseExec(o: Record<string, unknown>, loc: FieldLocation, dir: string): ExecConfig {
  const command = readString(o, 'command', loc);
  if (command === undefined) throw fieldError(at(loc, 'command'), 'is required');
  const mode = readString(o, 'interactiveMode', loc);
  if (mode !== undefined && !interactiveModes.includes(mode as InteractiveMode)) {
    throw fieldError(
      at(loc, 'interactiveMode'),
      `must be one of ${interactiveModes.join(', ')}, got ${JSON.stringify(mode)}`,
    );
  }
  const envLoc = at(loc, 'env');
  const env = readArray(o.env, envLoc).map((item, i) => {
    const e = readObject(item, at(envLoc, i));
    const name = readString(e, 'name', at(envLoc, i));
    if (name === undefined) throw fieldError(at(at(envLoc, i), 'name'), 'is required');
    return { name, value: readString(e, 'value', at(envLoc, i)) ?? '' };
  });
  // Like kubectl: a command with a path separator is a path, relative to this file; a bare name is
  // looked up on PATH.
  const isPath = command.includes('/') && !isAbsolute(command);
  return strip({
    apiVersion: readString(o, 'apiVersion', loc),
    command: isPath ? resolve(dir, command) : command,
    args: readStringArray(o, 'args', loc),
    env,
    installHint: readString(o, 'installHint', loc),
    provideClusterInfo: readBoolean(o, 'provideClusterInfo', loc) ?? false,
    interactiveMode: mode as InteractiveMode | undefined,
  });
}

/** Drop keys whose value is undefined, so results compare and print cleanly. */
function strip<T extends object>(obj: { [K in keyof T]: T[K] | undefined }): T {
  return Object.fromEntries(Object.entries(obj).filter(([, value]) => value !== undefined)) as T;
}
