/**
 * `raven ui [resource...]`: a live web view of the cluster's changes, served on loopback. It
 * watches the resources (by default the workloads `raven run` watches without a config) and
 * serves one self-contained page that streams every change with its diff (`src/ui/`).
 *
 * It runs until interrupted (exit 0). A resource discovery does not know, a bad kubeconfig or a
 * busy port end it with exit 1; a usage error with 2. Failures that heal (the apiserver
 * restarting, a dropped connection) show on the page as an outage (a notice when it starts, one
 * every 30 s, one when it heals) and the watch goes on.
 */
import { parseArgs } from 'node:util';
import { readFile } from 'node:fs/promises';
import { Discovery } from '../client/discovery.js';
import { watchResource, type ScopedWatcher } from '../watch/watch-resource.js';
import { DEFAULT_EXCLUDED_NAMESPACES } from '../raven/config/default-raven-config.js';
import { systemClock } from '../util/clock.js';
import { UiFeed } from '../ui/ui-feed.js';
import { UiServer } from '../ui/ui-server.js';
import { write, type Output } from './output.js';
import {
  CLUSTER_OPTIONS,
  SCOPE_OPTIONS,
  connectCluster,
  namespacesOf,
  scopeSelectors,
} from './cluster-target.js';
import { UsageError } from './usage-error.js';
import { LISTEN_OPTIONS, listenFlags } from './listen-address.js';
import { DEFAULT_RESOURCES, UI_DEFAULT_PORT, uiUsage } from './usage.js';

export interface UiCommandDeps {
  output: Output;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
}

export async function uiCommand(argv: string[], deps: UiCommandDeps): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      ...SCOPE_OPTIONS,
      ...LISTEN_OPTIONS,
      'token-file': { type: 'string' },
      ...CLUSTER_OPTIONS,
    },
  });
  if (values.help === true) {
    await write(deps.output.out, `${uiUsage}\n`);
    return 0;
  }
  const { labelSelector } = scopeSelectors(values);
  const where = { address: '127.0.0.1', port: UI_DEFAULT_PORT, ...listenFlags(values) };
  const env = deps.env ?? process.env;
  const token =
    values['token-file'] !== undefined
      ? (await readFile(values['token-file'], 'utf8')).trim()
      : env.RAVEN_UI_TOKEN?.trim() || undefined;
  if (token === '') throw new UsageError(`--token-file ${values['token-file'] ?? ''} is empty`);

  const client = await connectCluster(values, deps, 'raven ui');
  const watchers: ScopedWatcher[] = [];
  let server: UiServer | undefined;
  try {
    const discovery = new Discovery(client);
    const names = positionals.length > 0 ? positionals : DEFAULT_RESOURCES;
    const resources = [];
    for (const name of names) resources.push({ name, resource: await discovery.resolve(name, deps.signal) });
    const { namespaces } = namespacesOf(values, DEFAULT_EXCLUDED_NAMESPACES);
    const feed = new UiFeed({ clock: systemClock });
    const following = resources.map(({ name, resource }) => {
      const watcher = watchResource({
        transport: client,
        resource,
        namespaces,
        labelSelector,
        // Kept for the lag (the newest managedFields time); diffs leave them out.
        dropManagedFields: false,
        // Who made each change, under its diff.
        fieldManagers: true,
        signal: deps.signal,
        // One notice when an outage starts, one every 30 s, one when it heals (not one per retry).
        outages: { server: client.server, report: (report) => feed.outage(name, report) },
      });
      watchers.push(watcher);
      return feed.follow(name, resource, watcher);
    });
    server = await UiServer.start({
      feed,
      clock: systemClock,
      ...where,
      ...(token === undefined ? {} : { token }),
      portSetting: values.listen !== undefined ? '--listen' : '--port',
    });
    await write(deps.output.out, `raven ui: serving ${server.url}${token === undefined ? '' : '#token=…'}\n`);
    await Promise.race([
      Promise.all(following),
      new Promise((resolve) => deps.signal.addEventListener('abort', resolve, { once: true })),
    ]);
    return 0;
  } finally {
    for (const watcher of watchers) watcher.close();
    await server?.close();
    await client.destroy();
  }
}
