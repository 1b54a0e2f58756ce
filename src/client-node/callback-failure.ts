/**
 * A callback that throws. client-node swallows what a watch callback throws (it shares a `try`
 * with the JSON parse); Raven neither swallows it silently nor lets it end the informer or the
 * watch: the first failure of each informer or watch is written as a process warning (code
 * `RAVEN_CLIENT_NODE_CALLBACK`, which `--no-warnings` silences), with the count of later ones
 * given when it stops.
 */
export class CallbackFailures {
  readonly #what: string;
  #count = 0;

  constructor(what: string) {
    this.#what = what;
  }

  /** Call `fn`, reporting what it throws. */
  call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#count++;
      if (this.#count === 1) {
        process.emitWarning(
          `a callback of ${this.#what} threw (later ones are counted, not printed): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
          { code: 'RAVEN_CLIENT_NODE_CALLBACK' },
        );
      }
    }
  }

  /** Report how many more threw after the first, once, when the informer or watch stops. */
  summarize(): void {
    if (this.#count > 1) {
      process.emitWarning(`${this.#count} callbacks of ${this.#what} threw in all`, {
        code: 'RAVEN_CLIENT_NODE_CALLBACK',
      });
    }
    this.#count = 0;
  }
}
