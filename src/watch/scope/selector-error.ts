/**
 * A label or field selector that does not parse or validate. It is a {@link ConfigError}: selectors
 * come from configuration, and a loader may attach the path of the offending field. The message
 * quotes the selector, gives the 0-based position of the problem and says what would be valid.
 */
import { ConfigError } from '../../errors/raven-error.js';

export class SelectorError extends ConfigError {
  /** The selector text as given. */
  readonly selector: string;
  /** 0-based character index of the problem in {@link SelectorError.selector}. */
  readonly position: number;

  constructor(
    kind: 'label' | 'field',
    selector: string,
    position: number,
    problem: string,
    options: { path?: string; file?: string } = {},
  ) {
    super(
      `invalid ${kind} selector ${JSON.stringify(selector)} at position ${position}: ${problem}`,
      options,
    );
    this.selector = selector;
    this.position = position;
  }
}
