/**
 * `raven ui [resource...]`: a live web view of the cluster's changes, served on loopback. It
 * watches the resources (by default the workloads `raven run` watches without a config) and
 * serves one self-contained page that streams every change with its diff (`src/ui/`).
 *
 * It runs until interrupted (exit 0). A resource discovery does not know, a bad kubeconfig or a
 * busy port end it with exit 1; a usage error with 2. Failures that heal (the apiserver
 * restarting, a dropped connection) show on the page and the watch goes on.
 */
import { parseArgs } from 'node:util';
import { readFile } from 'node:fs/promises';
import { loadConfig } from '../client/load-config.js';
import { KubeClient } from '../client/kube-client.js';
import { Discovery } from '../client/discovery.js';
import { parseLabelSelector } from '../watch/scope/parse-label-selector.js';
import { watchResource, type ScopedWatcher } from '../watch/watch-resource.js';
import { DEFAULT_EXCLUDED_NAMESPACES } from '../raven/config/default-raven-config.js';
import { systemClock } from '../util/clock.js';
import { UiFeed } from '../ui/ui-feed.js';
import { UiServer } from '../ui/ui-server.js';
import { write, type Output } from './output.js';
import { installRedactionKey } from '../raven/redaction-key.js';
import { UsageError } from './usage-error.js';
import { parseListen, parsePort } from './listen-address.js';
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
      namespace: { type: 'string', short: 'n', multiple: true },
      'all-namespaces': { type: 'boolean', short: 'A' },
      selector: { type: 'string', short: 'l' },
      port: { type: 'string' },
      listen: { type: 'string' },
      'token-file': { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) {
    await write(deps.output.out, `${uiUsage}\n`);
    return 0;
  }
  if (values['all-namespaces'] === true && values.namespace !== undefined)
    throw new UsageError('use either -A or -n, not both');
  if (values.listen !== undefined && values.port !== undefined)
    throw new UsageError('use either --listen ADDRESS:PORT or --port PORT, not both');
  const where =
    values.listen !== undefined
      ? parseListen(values.listen, '--listen')
      : {
          address: '127.0.0.1',
          port: values.port === undefined ? UI_DEFAULT_PORT : parsePort(values.port, '--port'),
        };
  const labelSelector =
    values.selector === undefined ? undefined : parseLabelSelector(values.selector).toString();
  const env = deps.env ?? process.env;
  const token =
    values['token-file'] !== undefined
      ? (await readFile(values['token-file'], 'utf8')).trim()
      : env.RAVEN_UI_TOKEN?.trim() || undefined;
  if (token === '') throw new UsageError(`--token-file ${values['token-file'] ?? ''} is empty`);

  const config = await loadConfig({ kubeconfig: values.kubeconfig, context: values.context, env: deps.env });
  const keyWarning = await installRedactionKey({ env });
  if (keyWarning !== undefined) await write(deps.output.err, `raven ui: ${keyWarning}\n`);
  const client = new KubeClient(config);
  const watchers: ScopedWatcher[] = [];
  let server: UiServer | undefined;
  try {
    const discovery = new Discovery(client);
    const names = positionals.length > 0 ? positionals : DEFAULT_RESOURCES;
    const resources = [];
    for (const name of names) resources.push({ name, resource: await discovery.resolve(name, deps.signal) });
    const namespaces =
      values['all-namespaces'] === true ? undefined : (values.namespace ?? [...DEFAULT_EXCLUDED_NAMESPACES]);
    const feed = new UiFeed({ clock: systemClock });
    const following = resources.map(({ name, resource }) => {
      const watcher = watchResource({
        transport: client,
        resource,
        namespaces,
        labelSelector,
        // Kept for the lag (the newest managedFields time); diffs leave them out.
        dropManagedFields: false,
        signal: deps.signal,
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
