/**
 * The path of a field in a config file, written the way a user reads it: `sinks[2].url`,
 * `watchers[0].namespaces[1]`, `sinks[1].headers["X Key"]`. The one format for every config
 * error Raven reports (the daemon's file, kubeconfig files, the OpenStack block), so that
 * `ConfigError.path` reads the same wherever it comes from.
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
  return path.reduce<string>(appendConfigPath, '');
}

/**
 * A formatted path one step deeper, for readers that walk a document key by key.
 *
 * @example
 * appendConfigPath('users[1].user', 'client-key'); // => 'users[1].user.client-key'
 */
export function appendConfigPath(formatted: string, key: PropertyKey): string {
  if (typeof key === 'number') return `${formatted}[${key}]`;
  const text = typeof key === 'symbol' ? (key.description ?? '') : key;
  if (!IDENTIFIER.test(text)) return `${formatted}[${JSON.stringify(text)}]`;
  return formatted === '' ? text : `${formatted}.${text}`;
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
