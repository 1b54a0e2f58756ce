/**
 * A first-in first-out list with O(1) push and shift (an array with a moving head, compacted now
 * and then), because `Array.prototype.shift` is O(n) on long queues. An item shifted out is no
 * longer referenced by the list, so a drained list holds nothing. Shared by the work queue and
 * the informer's handler queues.
 */
export class Fifo<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  /** Drop every item. */
  clear(): void {
    this.#items = [];
    this.#head = 0;
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    if (this.#head === this.#items.length) {
      // Drained: start again at the front instead of keeping a run of empty slots.
      this.#items.length = 0;
      this.#head = 0;
      return item;
    }
    // Compact once the dead prefix is both large and the larger half, so the cost stays amortised O(1).
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }
}
