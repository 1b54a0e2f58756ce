/**
 * What `raven get`, `raven watch` and `raven ui` share: the options that pick a cluster and the
 * objects in it, their checks (made before any request, so a typo costs no round trip), the
 * connection each command opens (kubeconfig, then the Secret redaction key), and the watch that
 * get and watch start on it.
 */
import { loadConfig } from '../client/load-config.js';
import type { ResolvedConfig } from '../client/resolved-config.js';
import { KubeClient } from '../client/kube-client.js';
import { Discovery } from '../client/discovery.js';
import { qualifiedName, type ApiResource, type ResolvedResource } from '../client/api-resource.js';
import { watchResource, type ScopedWatcher } from '../watch/watch-resource.js';
import type { OutageReport } from '../watch/outage-tracker.js';
import { watchFailure } from '../errors/classify.js';
import { parseFieldSelector } from '../watch/scope/field-selector.js';
import { parseLabelSelector } from '../watch/scope/parse-label-selector.js';
import { installRedactionKey } from '../raven/model/redaction-key.js';
import { paint, write, type Output } from './output.js';
import { UsageError } from './usage-error.js';
import { ServerTable } from './server-table.js';
import { WatchFailures } from './watch-failures.js';

/** The cluster: `--kubeconfig`, `--context`, and `-h`. */
export const CLUSTER_OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Which objects: `-n` (repeatable, patterns), `-A`, `-l`. */
export const SCOPE_OPTIONS = {
  namespace: { type: 'string', short: 'n', multiple: true },
  'all-namespaces': { type: 'boolean', short: 'A' },
  selector: { type: 'string', short: 'l' },
} as const;

/**
 * How objects print (get and watch): `--field-selector`, `-o`, `--show-managed-fields`, and
 * kubectl's `--no-headers`, `--show-labels`, `-L key`.
 */
export const LISTING_OPTIONS = {
  'field-selector': { type: 'string' },
  output: { type: 'string', short: 'o' },
  'show-managed-fields': { type: 'boolean' },
  'no-headers': { type: 'boolean' },
  'show-labels': { type: 'boolean' },
  'label-columns': { type: 'string', short: 'L', multiple: true },
} as const;

/** What `--no-headers`, `--show-labels` and `-L` ask of the printer. */
export interface TableOptions {
  noHeaders: boolean;
  showLabels: boolean;
  /** `-L a -L b,c`: the keys in order, each once. */
  labelColumns: string[];
}

export function tableOptions(values: {
  'no-headers'?: boolean;
  'show-labels'?: boolean;
  'label-columns'?: string[];
}): TableOptions {
  const keys = (values['label-columns'] ?? []).flatMap((v) => v.split(',')).map((k) => k.trim());
  const bad = keys.find((k) => k === '' || /\s/.test(k));
  if (bad !== undefined)
    throw new UsageError(`-L takes label keys, e.g. -L app -L tier,version; got "${bad}"`);
  return {
    noHeaders: values['no-headers'] === true,
    showLabels: values['show-labels'] === true,
    labelColumns: [...new Set(keys)],
  };
}

export interface ScopeValues {
  namespace?: string[];
  'all-namespaces'?: boolean;
  selector?: string;
  'field-selector'?: string;
}

export interface Selectors {
  labelSelector: string | undefined;
  fieldSelector: string | undefined;
}

/**
 * `raven get|watch RESOURCE[,RESOURCE...] [NAME]`: the resources (kubectl's comma list, each once)
 * and the optional name, or a usage error that shows the command's own example.
 */
export function resourceArguments(
  command: 'get' | 'watch',
  positionals: readonly string[],
): { resourceNames: string[]; name: string | undefined } {
  const [resourceList, name, ...extra] = positionals;
  if (resourceList === undefined)
    throw new UsageError(`raven ${command} needs a resource, e.g. \`raven ${command} pods\``);
  if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
  const resourceNames = resourceList.split(',').map((r) => r.trim());
  if (resourceNames.some((r) => r === ''))
    throw new UsageError(
      `"${resourceList}" has an empty resource name: list them with commas, e.g. \`raven ${command} pods,services\``,
    );
  return { resourceNames: [...new Set(resourceNames)], name };
}

/**
 * Where the objects were looked for, as kubectl's messages say it: ` in NS namespace` for one
 * namespace of a namespaced resource, '' for every namespace or a cluster-scoped resource, and
 * ` in namespaces a b` for several (Raven's patterns).
 */
export function wherePhrase(scope: { namespaced: boolean } & Namespaces): string {
  if (!scope.namespaced || scope.namespaces === undefined) return '';
  if (scope.namespaces.length === 1 && !scope.allNamespaces)
    return ` in ${scope.namespaces[0] ?? ''} namespace`;
  return ` in namespaces ${scope.namespaces.join(' ')}`;
}

/**
 * What kubectl says on stderr when nothing was found: `No resources found in NS namespace.`, or
 * `No resources found` for every namespace or a cluster-scoped resource.
 */
export function noResourcesFound(scope: { namespaced: boolean } & Namespaces): string {
  const where = wherePhrase(scope);
  return where === '' ? 'No resources found' : `No resources found${where}.`;
}

/** kubectl's words for a named object that does not exist: `Error from server (NotFound): pods "web-9" not found`. */
export function notFound(resource: ApiResource, name: string): string {
  return `Error from server (NotFound): ${qualifiedName(resource)} "${name}" not found`;
}

/**
 * The selectors, checked (a parse error points at the position), with a named object as a
 * `metadata.name=` field term; `-A` with `-n` is a usage error.
 */
export function scopeSelectors(values: ScopeValues, name?: string): Selectors {
  if (values['all-namespaces'] === true && values.namespace !== undefined)
    throw new UsageError('use either -A or -n, not both');
  const labelSelector =
    values.selector === undefined ? undefined : parseLabelSelector(values.selector).toString();
  const fieldTerms = [
    values['field-selector'],
    name === undefined ? undefined : `metadata.name=${name}`,
  ].filter((t) => t !== undefined);
  const fieldSelector =
    fieldTerms.length === 0 ? undefined : parseFieldSelector(fieldTerms.join(',')).toString();
  return { labelSelector, fieldSelector };
}

export interface Namespaces {
  /** undefined: every namespace. */
  namespaces: string[] | undefined;
  /** More than one namespace may show up (so rows name theirs). */
  allNamespaces: boolean;
}

/** `-A`, else `-n`, else `fallback` (the kubeconfig context's namespace for get and watch). */
export function namespacesOf(values: ScopeValues, fallback: readonly string[]): Namespaces {
  const namespaces = values['all-namespaces'] === true ? undefined : (values.namespace ?? [...fallback]);
  const allNamespaces =
    namespaces === undefined || namespaces.some((n) => /[*?!]/.test(n)) || namespaces.length > 1;
  return { namespaces, allNamespaces };
}

/**
 * A client for the kubeconfig's cluster, with the redaction key installed (a warning about the key
 * goes to stderr, prefixed with the command). The caller destroys the client.
 */
export async function connectCluster(
  values: { kubeconfig?: string; context?: string },
  deps: { output: Output; env?: NodeJS.ProcessEnv },
  command: string,
): Promise<KubeClient> {
  const config = await kubeconfigOf(values, deps);
  const keyWarning = await installRedactionKey({ env: deps.env ?? process.env });
  if (keyWarning !== undefined) await write(deps.output.err, `${command}: ${keyWarning}\n`);
  return new KubeClient(config);
}

/** The cluster configuration `--kubeconfig` and `--context` name (read again to see whether its server moved). */
export function kubeconfigOf(
  values: { kubeconfig?: string; context?: string },
  deps: { env?: NodeJS.ProcessEnv },
): Promise<ResolvedConfig> {
  return loadConfig({ kubeconfig: values.kubeconfig, context: values.context, env: deps.env });
}

/** Whether discovery still serves `resource` (asked after a 404, to tell a removed CRD from a typo). */
export function stillServed(discovery: Discovery, resource: ApiResource, signal: AbortSignal) {
  return async (): Promise<boolean> =>
    (await discovery.refresh(signal)).some(
      (r) => r.group === resource.group && r.version === resource.version && r.resource === resource.resource,
    );
}

export interface TargetWatch extends Namespaces {
  resource: ResolvedResource;
  /** The apiserver's columns, when the output is rows. */
  table: ServerTable | undefined;
  watcher: ScopedWatcher;
  failures: WatchFailures;
}

/**
 * Resolve the resource, and start its watch (in Table form when `rows`) with the judge of its
 * failures: what `raven get` and `raven watch` run. The caller closes the watcher.
 */
export async function watchTarget(
  client: KubeClient,
  target: {
    resourceName: string;
    values: ScopeValues & { 'show-managed-fields'?: boolean };
    selectors: Selectors;
    rows: boolean;
    waitForRbac: boolean;
    /** Where outage lines go, and the command that prefixes them (`raven watch`). */
    output: Output;
    command: string;
  },
  signal: AbortSignal,
): Promise<TargetWatch> {
  const discovery = new Discovery(client);
  const resource = await discovery.resolve(target.resourceName, signal);
  const { namespaces, allNamespaces } = namespacesOf(target.values, [client.namespace]);
  const table = target.rows ? new ServerTable() : undefined;
  const watcher = watchResource({
    transport: table?.transport(client) ?? client,
    resource,
    namespaces,
    ...target.selectors,
    dropManagedFields: target.values['show-managed-fields'] !== true,
    // Who made each change, on the diff lines.
    fieldManagers: true,
    signal,
    // Transient failures are the outage's lines; the others are judged by WatchFailures.
    outages: {
      server: client.server,
      counts: (error) => watchFailure(error) === 'transient',
      report: (report) => printOutage(target.output, target.command, report),
    },
  });
  const failures = new WatchFailures({
    waitForRbac: target.waitForRbac,
    resource: qualifiedName(resource),
    stillServed: stillServed(discovery, resource, signal),
  });
  return { resource, namespaces, allNamespaces, table, watcher, failures };
}

/** Clears a progress line drawn on a terminal's last line (`list-progress.ts`). */
const CLEAR_LINE = '\r\u001b[2K';

/**
 * One outage line on stderr: `raven watch: pods: cannot reach 127.0.0.1:6443 (connection
 * refused); retrying`. Written at once (a few lines an outage): a report comes from a timer as
 * well as from the event loop.
 */
function printOutage(output: Output, command: string, report: OutageReport): void {
  const healed = report.kind === 'healed' && !report.mayHaveMissed;
  const line = paint(output, healed ? 'green' : 'yellow', `${command}: ${report.message}`);
  output.err.write(`${output.err.isTTY === true ? CLEAR_LINE : ''}${line}\n`);
}
