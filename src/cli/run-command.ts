/**
 * `raven run [-c raven.yaml]`: the daemon. Without a config it runs the built-in default (common
 * workload resources in every namespace but kube-*, printed to stdout), so a newcomer sees
 * something at once. SIGINT/SIGTERM drain and exit 0; a second signal exits at once.
 */
import { parseArgs } from 'node:util';
import { dirname } from 'node:path';
import { Daemon, defaultIdentity, type DaemonUi } from '../raven/daemon.js';
import { uiServerProblem } from '../raven/config/raven-config-schema.js';
import { UiFeed } from '../ui/ui-feed.js';
import { UiRoutes } from '../ui/ui-server.js';
import { systemClock } from '../util/clock.js';
import { loadRavenConfig } from '../raven/config/load-raven-config.js';
import { defaultRavenConfig } from '../raven/config/default-raven-config.js';
import { createLogger } from '../raven/logging.js';
import { reportSubscriberErrorsTo } from '../raven/model/diagnostics.js';
import { installRedactionKey } from '../raven/model/redaction-key.js';
import { write, type Output } from './output.js';
import { UsageError } from './usage-error.js';
import { isRavenError } from '../errors/is-raven-error.js';
import { RavenError } from '../errors/raven-error.js';
import { LISTEN_OPTIONS, listenFlags } from './listen-address.js';
import { CLUSTER_OPTIONS } from './cluster-target.js';
import { runUsage } from './usage.js';

export async function runCommand(
  argv: string[],
  deps: { output: Output; signal: AbortSignal },
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string', short: 'c' },
      'log-level': { type: 'string' },
      'log-format': { type: 'string' },
      ...LISTEN_OPTIONS,
      ...CLUSTER_OPTIONS,
    },
  });
  if (values.help === true) {
    await write(deps.output.out, `${runUsage}\n`);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`unexpected arguments: ${positionals.join(' ')} (the config is given with -c)`);
  const warnings: string[] = [];
  const config =
    values.config === undefined
      ? defaultRavenConfig({ identity: defaultIdentity() })
      : await loadRavenConfig(values.config, {
          defaultIdentity: defaultIdentity(),
          onWarning: (w) => warnings.push(w.message),
        });
  if (values.kubeconfig !== undefined) config.kubeconfig = values.kubeconfig;
  if (values.context !== undefined) config.context = values.context;
  const listen = listenFlags(values);
  if (listen !== undefined) Object.assign(config.server, listen, { enabled: true });
  const uiProblem = uiServerProblem(config.server);
  if (uiProblem !== undefined)
    throw new UsageError(
      `server.${uiProblem.path.join('.')} ${uiProblem.message} (--listen ${values.listen ?? ''})`,
    );
  const level = values['log-level'] ?? config.logLevel;
  if (!['trace', 'debug', 'info', 'warn', 'error'].includes(level)) {
    throw new UsageError(`--log-level must be one of trace, debug, info, warn, error; got "${level}"`);
  }
  const format = values['log-format'];
  if (format !== undefined && format !== 'json' && format !== 'pretty')
    throw new UsageError(`--log-format must be json or pretty; got "${format}"`);
  const logger = createLogger(level, format === undefined ? {} : { pretty: format === 'pretty' });
  for (const warning of warnings) logger.warn({}, warning);
  reportSubscriberErrorsTo(logger);
  // The key lives beside the checkpoint, which keeps fingerprints: both move together.
  const keyWarning = await installRedactionKey(
    config.checkpoint.type === 'sqlite' ? { dir: dirname(config.checkpoint.path) } : {},
  );
  if (keyWarning !== undefined) logger.warn({}, keyWarning);
  if (values.config === undefined)
    logger.info(
      {},
      'no config given (-c): watching workloads in every namespace but kube-* and printing changes',
    );
  const daemon = new Daemon({
    config,
    logger,
    ...(config.server.ui.enabled ? { ui: daemonUi(config.server.ui.token) } : {}),
    ...(values.config === undefined ? {} : { configFile: values.config }),
  });
  try {
    await daemon.run(deps.signal);
  } catch (err) {
    if (isRavenError(err, 'ERR_ADDRESS_IN_USE'))
      throw new RavenError(err.code, `${err.message}, or use raven run --port PORT / --listen ADDRESS:PORT`, {
        cause: err,
      });
    throw err;
  }
  logger.info({}, 'stopped');
  logger.flush();
  return 0;
}

/** The web view for the daemon's server: the same page and feed as `raven ui`. */
function daemonUi(token: string | undefined): DaemonUi {
  const feed = new UiFeed({ clock: systemClock });
  return {
    routes: new UiRoutes({ feed, clock: systemClock, ...(token === undefined ? {} : { token }) }),
    source: (name, resource, status) => feed.source(name, resource, status),
  };
}
