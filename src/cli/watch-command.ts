/**
 * `raven watch <resource> [name]`: current objects, then every change as it happens, with what
 * changed. What `kubectl get -w` should have been: it never silently stops (reconnects, relists
 * and says so), shows diffs, and resolves any resource name discovery knows.
 *
 * It ends only when interrupted (exit 0) or on a failure that cannot heal (exit 1, with the
 * apiserver's message); which failures those are is decided in `watch-failures.ts`. An outage is
 * a few lines on stderr (`watch/outage-tracker.ts`), and a cluster whose kubeconfig now names
 * another address, after its old one refused connections, is followed there (`server-moved.ts`).
 */
import { parseArgs } from 'node:util';
import type { ScopedWatcher } from '../watch/watch-resource.js';
import { paint, write, type Output } from './output.js';
import {
  CLUSTER_OPTIONS,
  LISTING_OPTIONS,
  SCOPE_OPTIONS,
  connectCluster,
  kubeconfigOf,
  scopeSelectors,
  watchTarget,
  resourceArguments,
} from './cluster-target.js';
import { parseWatchFormat, WatchPrinter, type PrintedObject } from './format-watch.js';
import { WatchFailures } from './watch-failures.js';
import { ServerMoved } from './server-moved.js';
import { KubeClient } from '../client/kube-client.js';
import type { ResolvedConfig } from '../client/resolved-config.js';
import { ServerTable } from './server-table.js';
import { ListProgress } from './list-progress.js';
import { estimateListTotal } from './list-total.js';
import { watchUsage } from './usage.js';

export interface WatchCommandDeps {
  output: Output;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
}

export async function watchCommand(argv: string[], deps: WatchCommandDeps): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      ...SCOPE_OPTIONS,
      ...LISTING_OPTIONS,
      'since-now': { type: 'boolean' },
      'wait-for-rbac': { type: 'boolean' },
      ...CLUSTER_OPTIONS,
    },
  });
  if (values.help === true) {
    await write(deps.output.out, `${watchUsage}\n`);
    return 0;
  }
  const { resourceName, name } = resourceArguments('watch', positionals);
  const format = parseWatchFormat(values.output ?? 'table');
  // Validate selectors before any request, with errors that point at the position.
  const selectors = scopeSelectors(values, name);

  let client = await connectCluster(values, deps, 'raven watch');
  try {
    for (;;) {
      const ended = await watchOn(client, { resourceName, format, selectors, values }, deps);
      if (typeof ended === 'number') return ended;
      await write(
        deps.output.err,
        `${paint(deps.output, 'yellow', `raven watch: the kubeconfig now names ${ended.server} for this context (was ${client.server}); watching there`)}\n`,
      );
      await client.destroy();
      client = new KubeClient(ended);
    }
  } finally {
    await client.destroy();
  }
}

/**
 * One watch on one server: 0 when interrupted, 1 on a failure that cannot heal, or the
 * kubeconfig's new configuration when the server it names has moved (`server-moved.ts`).
 */
async function watchOn(
  client: KubeClient,
  target: {
    resourceName: string;
    format: ReturnType<typeof parseWatchFormat>;
    selectors: ReturnType<typeof scopeSelectors>;
    values: Parameters<typeof watchTarget>[1]['values'] & {
      'wait-for-rbac'?: boolean;
      'since-now'?: boolean;
      kubeconfig?: string;
      context?: string;
    };
  },
  deps: WatchCommandDeps,
): Promise<number | ResolvedConfig> {
  const { resourceName, format, selectors, values } = target;
  let watcher: ScopedWatcher | undefined;
  try {
    const started = await watchTarget(
      client,
      {
        resourceName,
        values,
        selectors,
        // Rows need the server's columns; the other formats print from the objects (the plain form).
        rows: format.kind === 'table' || format.kind === 'wide' || format.kind === 'diff',
        waitForRbac: values['wait-for-rbac'] === true,
        output: deps.output,
        command: 'raven watch',
      },
      deps.signal,
    );
    const { resource, namespaces, allNamespaces, table, failures } = started;
    watcher = started.watcher;
    const printer = new WatchPrinter({
      output: deps.output,
      format,
      namespaced: resource.namespaced && allNamespaces,
      resource: resource.resource,
      now: () => Date.now(),
      columns: () => table?.columns,
    });
    const progress = new ListProgress(deps.output, resource.resource);
    // Asked before the list starts, so the first line drawn has it: one small request, a terminal only.
    if (progress.shown)
      progress.total = await estimateListTotal(client, resource, {
        namespaces,
        ...selectors,
        signal: deps.signal,
      });
    const moved = new ServerMoved({
      current: client.server,
      reload: () => kubeconfigOf(values, deps),
      now: () => Date.now(),
    });
    return await follow(started.watcher, {
      printer,
      failures,
      table,
      progress,
      moved,
      sinceNow: values['since-now'] === true,
      ...deps,
    });
  } finally {
    // Stop the requests first, then the connections, so the process can exit at once.
    watcher?.close();
  }
}

/**
 * Objects whose names and cells size the table's columns before the first row prints: enough for
 * a representative width, few enough that the first line comes with the first page of a big list.
 */
const SIZE_COLUMNS_FROM = 100;

/** Print the watcher's events until it ends (0: interrupted) or a failure cannot heal (1). */
async function follow(
  watcher: ScopedWatcher,
  o: WatchCommandDeps & {
    printer: WatchPrinter;
    failures: WatchFailures;
    table: ServerTable | undefined;
    sinceNow: boolean;
    progress: ListProgress;
    moved: ServerMoved;
  },
): Promise<number | ResolvedConfig> {
  const { output, printer, failures, table, progress } = o;
  // The first objects are held back to size the columns, then every row prints as it arrives.
  let held = [] as PrintedObject[] | undefined;
  const release = async (): Promise<void> => {
    if (held === undefined) return;
    printer.sizeColumns(held);
    const rows = held.map(({ object, cells }) => printer.render({ type: 'initial', object }, cells));
    held = undefined;
    await progress.print(rows.join(''));
  };
  for await (const event of watcher) {
    switch (event.type) {
      case 'initial': {
        const cells = table?.take(event.object);
        await progress.add();
        if (o.sinceNow) break;
        if (held === undefined) {
          await progress.print(printer.render({ type: 'initial', object: event.object }, cells));
          break;
        }
        held.push({ object: event.object, cells });
        if (held.length >= SIZE_COLUMNS_FROM) await release();
        break;
      }
      case 'synced':
        if (!event.relist) {
          await release();
          await progress.finish();
        }
        break;
      case 'added':
      case 'modified':
      case 'deleted':
        await progress.print(printer.render(event, table?.take(event.object)));
        break;
      case 'error': {
        const verdict = await failures.judge(event.error, event.status);
        if (o.signal.aborted) return 0;
        await progress.interrupt();
        if (verdict.end) {
          await write(output.err, `${paint(output, 'red', `raven watch: ${verdict.message}`)}\n`);
          return 1;
        }
        if (verdict.notice !== undefined)
          await write(output.err, `${paint(output, 'yellow', `raven watch: ${verdict.notice}`)}\n`);
        const config = await o.moved.failed(event.error);
        if (config !== undefined) return config;
        break;
      }
      case 'listing':
      case 'bookmark':
        break;
    }
    if (event.type !== 'error' && event.type !== 'listing') failures.progressed();
    if (event.type !== 'error') o.moved.answered();
  }
  return 0;
}
