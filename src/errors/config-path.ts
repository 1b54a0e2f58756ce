/**
 * The path of a field in a config file, written the way a user reads it: `sinks[2].url`,
 * `watchers[0].namespaces[1]`, `sinks[1].headers["X-Api-Key"]`.
 */

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** A path as a list of keys (object keys and list indexes). */
export type ConfigPath = readonly PropertyKey[];

/**
 * Format a path for messages.
 *
 * @example
 * formatConfigPath(['sinks', 2, 'url']); // => 'sinks[2].url'
 * formatConfigPath(['sinks', 0, 'headers', 'X Key']); // => 'sinks[0].headers["X Key"]'
 */
export function formatConfigPath(path: ConfigPath): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else {
      const text = typeof key === 'symbol' ? (key.description ?? '') : key;
      if (!IDENTIFIER.test(text)) out += `[${JSON.stringify(text)}]`;
      else out += out === '' ? text : `.${text}`;
    }
  }
  return out;
}

/** Whether `path` is `prefix` or lies below it. */
export function isWithin(path: ConfigPath, prefix: ConfigPath): boolean {
  return prefix.length <= path.length && prefix.every((key, i) => path[i] === key);
}

/** The value at `path` in plain data, or undefined when some step is missing. */
export function valueAt(data: unknown, path: ConfigPath): unknown {
  let current = data;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}
