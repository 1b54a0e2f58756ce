/**
 * A binary min-heap ordered by a comparison function: O(log n) push and pop, O(1) peek. Internal to
 * the queue (the delaying queue keeps its waiting keys in one, earliest due time first).
 */
export class MinHeap<T> {
  readonly #items: T[] = [];
  readonly #less: (a: T, b: T) => boolean;

  /** `less(a, b)` is true when `a` must come out before `b`. */
  constructor(less: (a: T, b: T) => boolean) {
    this.#less = less;
  }

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    const items = this.#items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(items[i] as T, items[parent] as T)) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    items[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < items.length && this.#less(items[left] as T, items[least] as T)) least = left;
      if (right < items.length && this.#less(items[right] as T, items[least] as T)) least = right;
      if (least === i) break;
      this.#swap(i, least);
      i = least;
    }
    return top;
  }

  clear(): void {
    this.#items.length = 0;
  }

  #swap(a: number, b: number): void {
    const items = this.#items;
    [items[a], items[b]] = [items[b] as T, items[a] as T];
  }
}
