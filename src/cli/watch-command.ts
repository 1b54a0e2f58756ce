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
import { paint, write, type Output } from './output.js';
import { qualifiedName } from '../client/api-resource.js';
import { merge } from '../watch/merge.js';
import { redact } from '../raven/model/redact.js';
import type { WatcherEvent } from '../watch/watcher-events.js';
import {
  CLUSTER_OPTIONS,
  LISTING_OPTIONS,
  SCOPE_OPTIONS,
  connectCluster,
  kubeconfigOf,
  noResourcesFound,
  wherePhrase,
  scopeSelectors,
  tableOptions,
  watchTarget,
  resourceArguments,
  type TableOptions,
  type TargetWatch,
} from './cluster-target.js';
import {
  parseWatchFormat,
  WatchPrinter,
  type PrintedObject,
  type Shown,
  type WatchFormat,
} from './format-watch.js';
import { ServerMoved } from './server-moved.js';
import { isRetryable } from '../errors/classify.js';
import { Backoff } from '../util/backoff.js';
import { sleep, systemClock } from '../util/clock.js';
import { KubeClient } from '../client/kube-client.js';
import type { ResolvedConfig } from '../client/resolved-config.js';
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
      'output-watch-events': { type: 'boolean' },
      'since-now': { type: 'boolean' },
      'wait-for-rbac': { type: 'boolean' },
      ...CLUSTER_OPTIONS,
    },
  });
  if (values.help === true) {
    await write(deps.output.out, `${watchUsage}\n`);
    return 0;
  }
  const { resourceNames, name } = resourceArguments('watch', positionals);
  const format = parseWatchFormat(values.output ?? 'table');
  // Validate selectors before any request, with errors that point at the position.
  const selectors = scopeSelectors(values, name);
  const columns = tableOptions(values);

  let client = await connectCluster(values, deps, 'raven watch');
  const follow = async (config: ResolvedConfig): Promise<void> => {
    await write(
      deps.output.err,
      `${paint(deps.output, 'yellow', `raven watch: the kubeconfig now names ${config.server} for this context (was ${client.server}); watching there`)}\n`,
    );
    await client.destroy();
    client = new KubeClient(config);
  };
  // Followed to the address the kubeconfig names now: a server restarted there may not answer
  // yet, which heals (said once, retried, the kubeconfig read again each time); at the address
  // the command started on, a server that does not answer ends it, as kubectl does.
  let followed = false;
  const backoff = new Backoff(NOT_ANSWERING_YET);
  let said = false;
  try {
    for (;;) {
      let ended: number | ResolvedConfig;
      try {
        ended = await watchOn(client, { resourceNames, name, format, selectors, columns, values }, deps);
      } catch (error) {
        if (!followed || !isRetryable(error) || deps.signal.aborted) throw error;
        if (!said) {
          said = true;
          const why = error instanceof Error ? error.message : String(error);
          await write(
            deps.output.err,
            `raven watch: ${client.server} does not answer yet (${why}); retrying\n`,
          );
        }
        try {
          await sleep(systemClock, backoff.fail(), deps.signal);
        } catch {
          return 0; // interrupted while waiting
        }
        const config = await kubeconfigOf(values, deps).catch(() => undefined);
        if (config !== undefined && config.server !== client.server) await follow(config);
        continue;
      }
      if (typeof ended === 'number') return ended;
      await follow(ended);
      followed = true;
      said = false;
      backoff.succeeded();
    }
  } finally {
    await client.destroy();
  }
}

/** Retries at an address the kubeconfig moved to, while the server there does not answer yet. */
const NOT_ANSWERING_YET = { initialMs: 250, maxMs: 5_000, factor: 2, jitter: 0.2 };

/** One resource being watched: its watch, its printer, the judge of its failures. */
interface Target extends TargetWatch {
  printer: WatchPrinter;
  /** Objects of the initial list held back to size the columns (undefined once printed). */
  held: PrintedObject[] | undefined;
  /** Objects the initial list has had so far. */
  listed: number;
  synced: boolean;
}

/**
 * One watch on one server: 0 when interrupted, 1 on a failure that cannot heal, or the
 * kubeconfig's new configuration when the server it names has moved (`server-moved.ts`).
 */
async function watchOn(
  client: KubeClient,
  target: {
    resourceNames: readonly string[];
    name: string | undefined;
    format: WatchFormat;
    selectors: ReturnType<typeof scopeSelectors>;
    columns: TableOptions;
    values: Parameters<typeof watchTarget>[1]['values'] & {
      'wait-for-rbac'?: boolean;
      'since-now'?: boolean;
      'output-watch-events'?: boolean;
      kubeconfig?: string;
      context?: string;
    };
  },
  deps: WatchCommandDeps,
): Promise<number | ResolvedConfig> {
  const { format, selectors, values } = target;
  const started: TargetWatch[] = [];
  try {
    for (const resourceName of target.resourceNames) {
      const one = await watchTarget(
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
      started.push(one);
    }
    const several = new Set(started.map((t) => qualifiedName(t.resource))).size > 1;
    let shared: WatchPrinter | undefined;
    const targets = started.map((t): Target => {
      const printer = new WatchPrinter({
        output: deps.output,
        format,
        namespaced: t.resource.namespaced && t.allNamespaces,
        resource: t.resource.resource,
        now: () => Date.now(),
        columns: () => t.table?.columns,
        withKind: several,
        watchEvents: values['output-watch-events'] === true,
        ...target.columns,
      });
      // Custom columns are one table whatever the kinds, as kubectl prints them.
      if (format.kind === 'custom-columns') shared ??= printer;
      return { ...t, printer: shared ?? printer, held: [], listed: 0, synced: false };
    });
    const progress = new ListProgress(deps.output, targets.map((t) => t.resource.resource).join(','));
    // Asked before the list starts, so the first line drawn has it: one small request, a terminal only.
    if (progress.shown) {
      let total: number | undefined = 0;
      for (const t of targets) {
        const one = await estimateListTotal(client, t.resource, {
          namespaces: t.namespaces,
          ...selectors,
          signal: deps.signal,
        });
        total = one === undefined || total === undefined ? undefined : total + one;
      }
      progress.total = total;
    }
    const moved = new ServerMoved({
      current: client.server,
      reload: () => kubeconfigOf(values, deps),
      now: () => Date.now(),
    });
    return await follow(targets, {
      progress,
      moved,
      name: target.name,
      sinceNow: values['since-now'] === true,
      headerPerKind: format.kind === 'table' || format.kind === 'wide' || format.kind === 'diff',
      ...deps,
    });
  } finally {
    // Stop the requests first, then the connections, so the process can exit at once.
    for (const t of started) t.watcher.close();
  }
}

/**
 * Objects whose names and cells size the table's columns before the first row prints: enough for
 * a representative width, few enough that the first line comes with the first page of a big list.
 */
const SIZE_COLUMNS_FROM = 100;

/** Each watcher's events, tagged with the target they belong to, in one stream. */
async function* tagged(targets: readonly Target[]): AsyncGenerator<{ t: Target; event: WatcherEvent }> {
  const sources = targets.map(async function* (t) {
    for await (const event of t.watcher) yield { t, event };
  });
  yield* merge(sources, () => {
    for (const t of targets) t.watcher.close();
  });
}

/**
 * Print the watchers' events until they end (0: interrupted) or a failure cannot heal (1).
 *
 * When the initial lists found nothing, it says so on stderr as kubectl does (`No resources found
 * in NS namespace.`), or for a named object that it waits for it, and goes on watching.
 */
async function follow(
  targets: readonly Target[],
  o: WatchCommandDeps & {
    sinceNow: boolean;
    name: string | undefined;
    /** Print a table's header again when another kind's rows follow. */
    headerPerKind: boolean;
    progress: ListProgress;
    moved: ServerMoved;
  },
): Promise<number | ResolvedConfig> {
  const { output, progress } = o;
  let last: WatchPrinter | undefined;
  const print = async (t: Target, event: Shown, cells?: readonly unknown[]): Promise<void> => {
    if (o.headerPerKind && last !== undefined && last !== t.printer) t.printer.headerAgain();
    last = t.printer;
    await progress.print(t.printer.render(redactedFor(t.resource.resource, event), cells));
  };
  // The first objects are held back to size the columns, then every row prints as it arrives.
  const release = async (t: Target): Promise<void> => {
    if (t.held === undefined) return;
    t.printer.sizeColumns(t.held);
    const held = t.held;
    t.held = undefined;
    for (const { object, cells } of held) await print(t, { type: 'initial', object }, cells);
  };
  for await (const { t, event } of tagged(targets)) {
    switch (event.type) {
      case 'initial': {
        const cells = t.table?.take(event.object);
        t.listed++;
        await progress.add();
        if (o.sinceNow) break;
        if (t.held === undefined) {
          await print(t, { type: 'initial', object: event.object }, cells);
          break;
        }
        t.held.push({ object: event.object, cells });
        if (t.held.length >= SIZE_COLUMNS_FROM) await release(t);
        break;
      }
      case 'synced':
        if (!event.relist && !t.synced) {
          t.synced = true;
          await release(t);
          if (targets.every((x) => x.synced)) await progress.finish();
          await nothingFound(targets, t, o);
        }
        break;
      case 'added':
      case 'modified':
      case 'deleted':
        await print(t, event, t.table?.take(event.object));
        break;
      case 'error': {
        const verdict = await t.failures.judge(event.error, event.status);
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
    if (event.type !== 'error' && event.type !== 'listing') t.failures.progressed();
    if (event.type !== 'error') o.moved.answered();
  }
  return 0;
}

/**
 * The event with its states redacted as `resource`'s: a printer shared by several kinds (custom
 * columns) knows only the first one's (redact() is idempotent, so the printer's own pass is harmless).
 */
function redactedFor(resource: string, event: Shown): Shown {
  const object = redact(event.object, resource);
  if (event.type === 'modified' && event.previous !== undefined)
    return { ...event, object, previous: redact(event.previous, resource) };
  return { ...event, object };
}

/**
 * After a first list: a named object that is not there is waited for (one line per resource);
 * otherwise, once every list is done and none found anything, kubectl's `No resources found`.
 */
async function nothingFound(
  targets: readonly Target[],
  t: Target,
  o: { output: Output; name: string | undefined },
): Promise<void> {
  if (o.name !== undefined) {
    if (t.listed === 0)
      await write(
        o.output.err,
        `raven watch: ${qualifiedName(t.resource)} "${o.name}" not found${wherePhrase({ ...t, namespaced: t.resource.namespaced })}; waiting for it\n`,
      );
    return;
  }
  if (!targets.every((x) => x.synced) || targets.some((x) => x.listed > 0)) return;
  const first = targets[0];
  if (first === undefined) return;
  const namespaced = targets.every((x) => x.resource.namespaced);
  await write(o.output.err, `${noResourcesFound({ ...first, namespaced })}\n`);
}
