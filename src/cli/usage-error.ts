/** A mistake in the command line: printed with the command's usage, exit code 2. */
import { RavenError } from '../errors/raven-error.js';

export class UsageError extends RavenError {
  constructor(message: string) {
    super('ERR_USAGE', message);
  }
}
