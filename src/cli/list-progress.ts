/**
 * The progress line of `raven watch` during its initial list: `listing configmaps: 1200 of ~3000`
 * (or `1200 so far` while no total is known) on stderr, redrawn in place, only when stderr is a terminal (nothing extra when piped or
 * redirected). Rows printed to stdout meanwhile go above it: the line is cleared before them and
 * drawn again after. It goes away when the list is complete.
 *
 * The count is of objects received so far; the total is the apiserver's estimate from before the
 * list (`list-total.ts`), marked `~` because objects may come and go meanwhile.
 */
import { write, type Output } from './output.js';

/** Redraw after this many more objects: often enough to move, rarely enough not to cost. */
const REDRAW_EVERY = 50;
const CLEAR_LINE = '\r\u001b[2K';

export class ListProgress {
  readonly #output: Output;
  readonly #what: string;
  readonly #on: boolean;
  #count = 0;
  #total: number | undefined;
  #drawn = false;
  #done = false;

  constructor(output: Output, what: string) {
    this.#output = output;
    this.#what = what;
    this.#on = output.err.isTTY === true;
  }

  /** Whether the line is drawn at all (stderr is a terminal): nothing else to do for it otherwise. */
  get shown(): boolean {
    return this.#on;
  }

  /** The estimated number of objects in the list; shown from the next redraw on. */
  set total(total: number | undefined) {
    this.#total = total;
  }

  /** One more object received. */
  async add(): Promise<void> {
    this.#count++;
    if (this.#on && !this.#done && (this.#count === 1 || this.#count % REDRAW_EVERY === 0))
      await this.#draw();
  }

  /** Write rows to stdout without tearing the progress line. */
  async print(text: string): Promise<void> {
    if (text === '') return;
    if (this.#drawn) await this.#clear();
    await write(this.#output.out, text);
    if (this.#on && !this.#done && this.#count > 0) await this.#draw();
  }

  /** Clear the line before a message on stderr; it comes back with the next objects. */
  async interrupt(): Promise<void> {
    if (this.#drawn) await this.#clear();
  }

  /** The list is complete: remove the line for good. */
  async finish(): Promise<void> {
    this.#done = true;
    if (this.#drawn) await this.#clear();
  }

  async #draw(): Promise<void> {
    this.#drawn = true;
    const of = this.#total === undefined ? 'so far' : `of ~${this.#total}`;
    await write(this.#output.err, `${CLEAR_LINE}listing ${this.#what}: ${this.#count} ${of}`);
  }

  async #clear(): Promise<void> {
    this.#drawn = false;
    await write(this.#output.err, CLEAR_LINE);
  }
}
