/**
 * `raven check -c raven.yaml`: validate a config. Prints every problem (file, field path, what
 * would be valid) and every warning; exit 0 when valid, 1 otherwise.
 *
 * A file that is valid as a file is then checked against the cluster `raven run` would watch (the
 * config's `kubeconfig`/`context`, `--kubeconfig`/`--context`, else `$KUBECONFIG`,
 * `~/.kube/config`, in-cluster): every watcher's `resource` is resolved through discovery, and a
 * name the cluster does not serve is an error on its field, with the nearest served names. When
 * no cluster can be asked (none configured, unreachable, credentials refused) that is an error too
 * (exit 1), saying so: a check that could not look is not a pass. `--offline` checks the file alone.
 */
import { parseArgs } from 'node:util';
import { loadRavenConfig } from '../raven/config/load-raven-config.js';
import type { RavenConfig } from '../raven/config/raven-config-schema.js';
import { checkWatcherResources } from '../raven/resolve-watchers.js';
import { configErrorList } from '../errors/config-aggregate-error.js';
import { ConfigError } from '../errors/raven-error.js';
import { shortErrorMessage } from '../errors/short-message.js';
import { loadConfig } from '../client/load-config.js';
import { KubeClient } from '../client/kube-client.js';
import { Discovery } from '../client/discovery.js';
import { silentLogger } from '../util/logger.js';
import { paint, write, type Output } from './output.js';
import { UsageError } from './usage-error.js';
import { checkUsage } from './usage.js';
import { plural } from '../util/plural.js';

export interface CheckCommandDeps {
  output: Output;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
}

export async function checkCommand(argv: string[], deps: CheckCommandDeps): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string', short: 'c' },
      offline: { type: 'boolean' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) {
    await write(deps.output.out, `${checkUsage}\n`);
    return 0;
  }
  const file = values.config ?? positionals[0];
  if (file === undefined) throw new UsageError('raven check needs a config file: raven check -c raven.yaml');
  const warnings: ConfigError[] = [];
  let config: RavenConfig;
  let errors: ConfigError[];
  try {
    config = await loadRavenConfig(file, { onWarning: (w) => warnings.push(w) });
    errors =
      values.offline === true
        ? []
        : await resourceProblems(config, file, {
            ...deps,
            kubeconfig: values.kubeconfig ?? config.kubeconfig,
            context: values.context ?? config.context,
          });
  } catch (error) {
    if (error instanceof ClusterUnavailable) {
      await printProblems(deps.output, [], warnings);
      await write(deps.output.err, `${paint(deps.output, 'red', 'error')}: ${error.message}\n`);
      return 1;
    }
    if (!(error instanceof ConfigError)) throw error;
    await printProblems(deps.output, configErrorList(error), warnings);
    await summary(deps.output, file, configErrorList(error).length);
    return 1;
  }
  await printProblems(deps.output, errors, warnings);
  if (errors.length > 0) {
    await summary(deps.output, file, errors.length);
    return 1;
  }
  const resources = values.offline === true ? 'resources not checked: --offline' : 'resources served';
  await write(
    deps.output.out,
    `${file}: valid (${plural(config.watchers.length, 'watcher')}, ${plural(config.sinks.length, 'sink')}, ${plural(config.routes.length, 'route')}, ${plural(config.handlers.length, 'handler')}; ${resources})\n`,
  );
  return 0;
}

/** No cluster could be asked which resources it serves. */
class ClusterUnavailable extends Error {}

/**
 * Each watcher's resource the cluster does not serve, as a problem on its field; throws
 * {@link ClusterUnavailable} when the cluster cannot be asked.
 */
async function resourceProblems(
  config: RavenConfig,
  file: string,
  options: CheckCommandDeps & { kubeconfig: string | undefined; context: string | undefined },
): Promise<ConfigError[]> {
  if (config.watchers.length === 0) return [];
  let client: KubeClient | undefined;
  try {
    client = new KubeClient(
      await loadConfig({ kubeconfig: options.kubeconfig, context: options.context, env: options.env }),
    );
    return await checkWatcherResources(config.watchers, new Discovery(client), {
      logger: silentLogger,
      signal: options.signal,
      configFile: file,
    });
  } catch (error) {
    // A kubeconfig's problem in full (it lists what would be valid); a network failure in short.
    const where =
      client === undefined
        ? `no cluster to ask (${error instanceof Error ? error.message : String(error)})`
        : `cannot ask ${client.server} (${shortErrorMessage(error)})`;
    throw new ClusterUnavailable(
      `${file}: the watchers' resources were not checked: ${where}; ` +
        'point to a reachable cluster (--kubeconfig, --context) or check the file alone with --offline',
      { cause: error },
    );
  } finally {
    await client?.destroy();
  }
}

async function printProblems(
  output: Output,
  errors: readonly ConfigError[],
  warnings: readonly ConfigError[],
): Promise<void> {
  for (const e of errors) await write(output.err, `${paint(output, 'red', 'error')}: ${e.message}\n`);
  for (const w of warnings) await write(output.err, `${paint(output, 'yellow', 'warning')}: ${w.message}\n`);
}

async function summary(output: Output, file: string, count: number): Promise<void> {
  await write(output.err, `${file}: ${count} ${count === 1 ? 'error' : 'errors'}\n`);
}
