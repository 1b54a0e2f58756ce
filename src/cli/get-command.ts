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
import {
  CLUSTER_OPTIONS,
  LISTING_OPTIONS,
  SCOPE_OPTIONS,
  connectCluster,
  scopeSelectors,
  watchTarget,
  resourceArguments,
} from './cluster-target.js';
import { parseWatchFormat, WatchPrinter, type PrintedObject } from './format-watch.js';
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
    options: { ...SCOPE_OPTIONS, ...LISTING_OPTIONS, ...CLUSTER_OPTIONS },
  });
  if (values.help === true) {
    await write(deps.output.out, `${getUsage}\n`);
    return 0;
  }
  const { resourceName, name } = resourceArguments('get', positionals);
  const format = parseWatchFormat(values.output ?? 'table');
  if (format.kind === 'diff')
    throw new UsageError('--output diff shows changes: use `raven watch -o diff`; raven get prints objects');
  const selectors = scopeSelectors(values, name);

  const client = await connectCluster(values, deps, 'raven get');
  let watcher: ScopedWatcher | undefined;
  try {
    const started = await watchTarget(
      client,
      {
        resourceName,
        values,
        selectors,
        rows: format.kind === 'table' || format.kind === 'wide',
        waitForRbac: false,
        output: deps.output,
        command: 'raven get',
      },
      deps.signal,
    );
    const { resource, namespaces, allNamespaces, table, failures } = started;
    watcher = started.watcher;
    const listed = await listOnce(started.watcher, table, failures, deps);
    if (typeof listed === 'string') {
      await write(deps.output.err, `${paint(deps.output, 'red', `raven get: ${listed}`)}\n`);
      return 1;
    }
    if (deps.signal.aborted) return 0;
    const where =
      !resource.namespaced || namespaces === undefined
        ? ''
        : namespaces.length === 1 && !allNamespaces
          ? ` in ${namespaces[0] ?? ''} namespace`
          : ` in namespaces ${namespaces.join(' ')}`;
    if (name !== undefined && listed.length === 0) {
      await write(deps.output.err, `raven get: ${resource.resource} "${name}" not found${where}\n`);
      return 1;
    }
    if (listed.length === 0) {
      await write(deps.output.err, `No resources found${where}.\n`);
      return 0;
    }
    if (format.kind === 'json' || format.kind === 'yaml' || format.kind === 'jsonpath') {
      // As kubectl: one List (`{.items[*].metadata.name}`), or the named object itself.
      const objects = listed.map(({ object }) => redact(object, resource.resource));
      const doc = name !== undefined ? objects[0] : { apiVersion: 'v1', kind: 'List', items: objects };
      const text =
        format.kind === 'jsonpath'
          ? format.template(doc)
          : format.kind === 'json'
            ? `${JSON.stringify(doc, null, 2)}\n`
            : stringify(doc);
      await write(deps.output.out, text === '' || text.endsWith('\n') ? text : `${text}\n`);
      return 0;
    }
    const printer = new WatchPrinter({
      output: deps.output,
      format,
      namespaced: resource.namespaced && allNamespaces,
      resource: resource.resource,
      now: () => Date.now(),
      columns: () => table?.columns,
      eventColumn: false,
    });
    printer.sizeColumns(listed);
    await write(
      deps.output.out,
      listed.map(({ object, cells }) => printer.render({ type: 'initial', object }, cells)).join(''),
    );
    return 0;
  } finally {
    watcher?.close();
    await client.destroy();
  }
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
