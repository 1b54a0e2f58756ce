/**
 * The error for a resource name discovery cannot resolve, with close matches to suggest.
 */
import { RavenError } from '../errors/raven-error.js';

export class UnknownResourceError extends RavenError {
  /** What the user typed. */
  readonly input: string;
  /** Close matches, qualified (`deployments.apps`), best first. */
  readonly suggestions: string[];

  constructor(input: string, message: string, suggestions: string[] = []) {
    const hint = suggestions.length === 0 ? '' : `; did you mean ${suggestions.join(', ')}?`;
    super('ERR_UNKNOWN_RESOURCE', `${message}${hint}`);
    this.input = input;
    this.suggestions = suggestions;
  }
}
