/**
 * `raven run [-c raven.yaml]`: the daemon. Without a config it runs the built-in default (common
 * workload resources in every namespace but kube-*, printed to stdout), so a newcomer sees
 * something at once. SIGINT/SIGTERM drain and exit 0; a second signal exits at once.
 */
import { parseArgs } from 'node:util';
import { Daemon, defaultIdentity } from '../raven/daemon.js';
import { loadRavenConfig } from '../raven/config/load-raven-config.js';
import { defaultRavenConfig } from '../raven/config/default-raven-config.js';
import { createLogger } from '../raven/logging.js';
import { write, type Output } from './output.js';
import { UsageError } from './usage-error.js';
import { isRavenError } from '../errors/is-raven-error.js';
import { RavenError } from '../errors/raven-error.js';
import { parseListen, parsePort } from './listen-address.js';

export const runUsage = `Usage: raven run [-c raven.yaml] [options]

Run the daemon: the watchers, routes and sinks of the config file.

Options:
  -c, --config FILE      the config (default: a built-in one that prints workload changes to stdout)
      --kubeconfig FILE  overrides the config's kubeconfig
      --context NAME     overrides the config's context
      --log-level LEVEL  trace | debug | info | warn | error (overrides the config)
      --log-format FMT   json | pretty (default: pretty on a terminal, JSON otherwise)
      --port PORT        the health and metrics server's port (overrides server.port; default 9479, 0 picks a free one)
      --listen ADDR:PORT its address and port, e.g. 0.0.0.0:9479 or [::1]:9479 (overrides server.address and server.port)
  -h, --help             this help

Logs go to stderr (JSON, or readable lines on a terminal); a stdout sink writes events to stdout.
Ctrl-C or SIGTERM: stop watching, drain deliveries (shutdown.drainTimeoutSeconds), write checkpoints,
exit 0; a second signal exits at once. Docs: docs/configuration.md.`;

export async function runCommand(
  argv: string[],
  deps: { output: Output; signal: AbortSignal },
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string', short: 'c' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      'log-level': { type: 'string' },
      'log-format': { type: 'string' },
      port: { type: 'string' },
      listen: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
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
  if (values.listen !== undefined && values.port !== undefined)
    throw new UsageError('use either --listen ADDRESS:PORT or --port PORT, not both');
  if (values.listen !== undefined)
    Object.assign(config.server, parseListen(values.listen, '--listen'), { enabled: true });
  if (values.port !== undefined)
    Object.assign(config.server, { port: parsePort(values.port, '--port'), enabled: true });
  const level = values['log-level'] ?? config.logLevel;
  if (!['trace', 'debug', 'info', 'warn', 'error'].includes(level)) {
    throw new UsageError(`--log-level must be one of trace, debug, info, warn, error; got "${level}"`);
  }
  const format = values['log-format'];
  if (format !== undefined && format !== 'json' && format !== 'pretty')
    throw new UsageError(`--log-format must be json or pretty; got "${format}"`);
  const logger = createLogger(level, format === undefined ? {} : { pretty: format === 'pretty' });
  for (const warning of warnings) logger.warn({}, warning);
  if (values.config === undefined)
    logger.info(
      {},
      'no config given (-c): watching workloads in every namespace but kube-* and printing changes',
    );
  const daemon = new Daemon({
    config,
    logger,
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
