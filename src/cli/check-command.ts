/**
 * `raven check -c raven.yaml`: validate a config without connecting anywhere. Prints every problem
 * (file, field path, what would be valid) and every warning; exit 0 when valid, 1 otherwise.
 */
import { parseArgs } from 'node:util';
import { loadRavenConfig } from '../raven/config/load-raven-config.js';
import { configErrorList } from '../errors/config-aggregate-error.js';
import { ConfigError } from '../errors/raven-error.js';
import { paint, write, type Output } from './output.js';
import { UsageError } from './usage-error.js';
import { checkUsage } from './usage.js';

export async function checkCommand(argv: string[], deps: { output: Output }): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help === true) {
    await write(deps.output.out, `${checkUsage}\n`);
    return 0;
  }
  const file = values.config ?? positionals[0];
  if (file === undefined) throw new UsageError('raven check needs a config file: raven check -c raven.yaml');
  const warnings: ConfigError[] = [];
  try {
    const config = await loadRavenConfig(file, { onWarning: (w) => warnings.push(w) });
    for (const w of warnings)
      await write(deps.output.err, `${paint(deps.output, 'yellow', 'warning')}: ${w.message}\n`);
    await write(
      deps.output.out,
      `${file}: valid (${config.watchers.length} watchers, ${config.sinks.length} sinks, ${config.routes.length} routes, ${config.handlers.length} handlers)\n`,
    );
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const errors = configErrorList(error);
    for (const e of errors)
      await write(deps.output.err, `${paint(deps.output, 'red', 'error')}: ${e.message}\n`);
    for (const w of warnings)
      await write(deps.output.err, `${paint(deps.output, 'yellow', 'warning')}: ${w.message}\n`);
    await write(deps.output.err, `${file}: ${errors.length} ${errors.length === 1 ? 'error' : 'errors'}\n`);
    return 1;
  }
}
