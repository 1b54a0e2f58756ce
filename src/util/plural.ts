/** A count with its noun in the right number: `1 watcher`, `3 watchers`, `2 watches`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
