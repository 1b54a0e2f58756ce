/**
 * `raven get <resource> [name]`: the objects that exist now, printed once, as `kubectl get` does:
 * the apiserver's columns (Table form), `-o wide`, `name`, `jsonpath=`, `custom-columns=`, and
 * `json`/`yaml` as one `List` (the object itself for a name). It is `raven watch` stopped at the
 * end of the initial list: the same list (paginated, namespace patterns, selectors), the same
 * printer, the same failure classification.
 *
 * Exit status: 0 when the list completed (nothing found is 0 too, with a note on stderr, as
 * kubectl does); 1 when a named object does not exist, on a failure that cannot heal, or after
 * {@link GIVE_UP_AFTER} failures in a row of one that could (a one-shot command does not wait for
 * an apiserver to come back); 2 on a usage error.
 */
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import type { KubeObject } from '../client/kube-object.js';
import type { ScopedWatcher } from '../watch/watch-resource.js';
import { redact } from '../raven/model/redact.js';
import { paint, write, type Output } from './output.js';
import type { KubeClient } from '../client/kube-client.js';
import type { ResolvedResource } from '../client/api-resource.js';
import {
  CLUSTER_OPTIONS,
  LISTING_OPTIONS,
  SCOPE_OPTIONS,
  connectCluster,
  noResourcesFound,
  notFound,
  scopeSelectors,
  tableOptions,
  watchTarget,
  resourceArguments,
  type Namespaces,
  type Selectors,
  type TableOptions,
} from './cluster-target.js';
import { parseWatchFormat, WatchPrinter, type PrintedObject, type WatchFormat } from './format-watch.js';
import { parseSortBy, sortByField } from './sort-by.js';
import { UsageError } from './usage-error.js';
import { WatchFailures } from './watch-failures.js';
import { ServerTable } from './server-table.js';
import { GIVE_UP_AFTER, getUsage } from './usage.js';

export interface GetCommandDeps {
  output: Output;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
}

export async function getCommand(argv: string[], deps: GetCommandDeps): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { ...SCOPE_OPTIONS, ...LISTING_OPTIONS, 'sort-by': { type: 'string' }, ...CLUSTER_OPTIONS },
  });
  if (values.help === true) {
    await write(deps.output.out, `${getUsage}\n`);
    return 0;
  }
  const { resourceNames, name } = resourceArguments('get', positionals);
  const format = parseWatchFormat(values.output ?? 'table');
  if (format.kind === 'diff')
    throw new UsageError('--output diff shows changes: use `raven watch -o diff`; raven get prints objects');
  const selectors = scopeSelectors(values, name);
  const columns = tableOptions(values);
  const sortBy = values['sort-by'] === undefined ? undefined : parseSortBy(values['sort-by']);

  const client = await connectCluster(values, deps, 'raven get');
  try {
    const groups: Listed[] = [];
    let missing = false;
    for (const resourceName of resourceNames) {
      const listed = await listResource(client, { resourceName, values, selectors, format }, deps);
      if (typeof listed === 'string') {
        await write(deps.output.err, `${paint(deps.output, 'red', `raven get: ${listed}`)}\n`);
        return 1;
      }
      if (deps.signal.aborted) return 0;
      if (sortBy !== undefined) {
        const sorted = sortByField(listed.objects, sortBy);
        if (typeof sorted === 'string') {
          await write(deps.output.err, `${paint(deps.output, 'red', `raven get: ${sorted}`)}\n`);
          return 1;
        }
        listed.objects = sorted;
      }
      if (name !== undefined && listed.objects.length === 0) {
        await write(deps.output.err, `${notFound(listed.resource, name)}\n`);
        missing = true;
      }
      groups.push(listed);
    }
    const objects = groups.flatMap((g) => g.objects);
    if (objects.length === 0) {
      if (missing) return 1;
      const first = groups[0];
      const namespaced = groups.every((g) => g.resource.namespaced);
      if (first !== undefined)
        await write(deps.output.err, `${noResourcesFound({ ...first, namespaced })}\n`);
      return 0;
    }
    await write(deps.output.out, printGroups(groups, { format, columns, name, deps }));
    return missing ? 1 : 0;
  } finally {
    await client.destroy();
  }
}

/** One resource's objects as listed, with what prints them. */
interface Listed extends Namespaces {
  resource: ResolvedResource;
  table: ServerTable | undefined;
  objects: PrintedObject[];
}

/** List one resource to the end; the objects, sorted by namespace and name, or why it failed. */
async function listResource(
  client: KubeClient,
  target: {
    resourceName: string;
    values: Parameters<typeof watchTarget>[1]['values'];
    selectors: Selectors;
    format: WatchFormat;
  },
  deps: GetCommandDeps,
): Promise<Listed | string> {
  const { format } = target;
  const started = await watchTarget(
    client,
    {
      ...target,
      rows: format.kind === 'table' || format.kind === 'wide',
      waitForRbac: false,
      output: deps.output,
      command: 'raven get',
    },
    deps.signal,
  );
  try {
    const { resource, namespaces, allNamespaces, table, failures } = started;
    const objects = await listOnce(started.watcher, table, failures, deps);
    if (typeof objects === 'string') return objects;
    return { resource, namespaces, allNamespaces, table, objects };
  } finally {
    started.watcher.close();
  }
}

/**
 * The text of every group, as kubectl prints several kinds: json, yaml and jsonpath one List (or
 * the named object itself); tables one per kind, a blank line between them, names as `kind/name`
 * when several kinds were asked for; custom columns one table.
 */
function printGroups(
  groups: readonly Listed[],
  o: { format: WatchFormat; columns: TableOptions; name: string | undefined; deps: GetCommandDeps },
): string {
  const { format } = o;
  const objects = groups.flatMap((g) => g.objects.map(({ object }) => redact(object, g.resource.resource)));
  if (format.kind === 'json' || format.kind === 'yaml' || format.kind === 'jsonpath') {
    // As kubectl: one List (`{.items[*].metadata.name}`), or the named object itself.
    const doc =
      o.name !== undefined && objects.length === 1 && groups.length === 1
        ? objects[0]
        : { apiVersion: 'v1', kind: 'List', items: objects };
    const text =
      format.kind === 'jsonpath'
        ? format.template(doc)
        : format.kind === 'json'
          ? `${JSON.stringify(doc, null, 2)}\n`
          : stringify(doc);
    return text === '' || text.endsWith('\n') ? text : `${text}\n`;
  }
  // kubectl names objects kind/name when several kinds were asked for, found or not
  // (`get pods,svc` with no pods still prints service/kubernetes).
  const kinds = new Set(groups.map((g) => `${g.resource.group}/${g.resource.resource}`));
  const printerFor = (group: Listed): WatchPrinter =>
    new WatchPrinter({
      output: o.deps.output,
      format,
      namespaced: group.resource.namespaced && group.allNamespaces,
      resource: group.resource.resource,
      now: () => Date.now(),
      columns: () => group.table?.columns,
      eventColumn: false,
      withKind: kinds.size > 1,
      ...o.columns,
    });
  // Custom columns are one table whatever the kinds (kubectl prints their header once).
  const shared =
    format.kind === 'custom-columns' || format.kind === 'name' ? printerFor(groups[0] as Listed) : undefined;
  if (shared !== undefined) shared.sizeColumns(groups.flatMap((g) => g.objects));
  const blocks = groups
    .filter((g) => g.objects.length > 0)
    .map((group) => {
      const printer = shared ?? printerFor(group);
      if (shared === undefined) printer.sizeColumns(group.objects);
      return (
        group.objects
          // Redacted as its own kind's: a shared printer knows only the first kind (redact() is idempotent).
          .map(({ object, cells }) =>
            printer.render({ type: 'initial', object: redact(object, group.resource.resource) }, cells),
          )
          .join('')
      );
    });
  // A blank line between kinds' tables when they have headers, as kubectl separates them.
  return blocks.join(shared === undefined && !o.columns.noHeaders ? '\n' : '');
}

/** The objects of the initial list, sorted by namespace and name; or why it failed. */
async function listOnce(
  watcher: ScopedWatcher,
  table: ServerTable | undefined,
  failures: WatchFailures,
  deps: GetCommandDeps,
): Promise<PrintedObject[] | string> {
  const listed: PrintedObject[] = [];
  for await (const event of watcher) {
    if (event.type === 'initial') listed.push({ object: event.object, cells: table?.take(event.object) });
    else if (event.type === 'synced') break;
    else if (event.type === 'error') {
      const verdict = await failures.judge(event.error, event.status);
      if (deps.signal.aborted) break;
      if (verdict.end) return verdict.message;
      if (event.status.failures >= GIVE_UP_AFTER)
        return `${event.error.message} (${event.status.failures} failures in a row; giving up)`;
      if (verdict.notice !== undefined)
        await write(deps.output.err, `${paint(deps.output, 'yellow', `raven get: ${verdict.notice}`)}\n`);
    }
  }
  const key = (o: KubeObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
  return listed.sort((a, b) => (key(a.object) < key(b.object) ? -1 : key(a.object) > key(b.object) ? 1 : 0));
}
