/**
 * Several configuration errors reported at once, so a user fixes a file in one round instead of
 * one error per run. It is a {@link ConfigError} (code `ERR_CONFIG`), so code that handles one
 * config error handles this too; `errors` holds each one with its own `path`.
 */
import { ConfigError } from './raven-error.js';

export class ConfigAggregateError extends ConfigError {
  /** Every problem found, in file order. */
  readonly errors: readonly ConfigError[];

  constructor(errors: readonly ConfigError[], options: { file?: string | undefined } = {}) {
    const lines = errors.map((error) => `  ${error.message}`);
    super(`${errors.length} problems in the configuration:\n${lines.join('\n')}`, { file: options.file });
    this.errors = errors;
  }
}

/**
 * The individual errors inside a config error: its `errors` for an aggregate, else itself.
 *
 * @example
 * for (const problem of configErrorList(error)) console.error(problem.message);
 */
export function configErrorList(error: ConfigError): readonly ConfigError[] {
  return error instanceof ConfigAggregateError ? error.errors : [error];
}
