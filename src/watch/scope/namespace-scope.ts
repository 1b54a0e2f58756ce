/**
 * Which namespaces a watch covers: all of them, exact names, glob patterns (`team-*`, `*-prod`,
 * `ns-?`) and exclusions (`!kube-*`, `!team-legacy`). A namespace is in scope when it matches an
 * inclusion (or there are none) and no exclusion. `*` alone means all namespaces.
 *
 * Entries are validated when the scope is built: names must be DNS labels (what the apiserver
 * allows for namespaces), patterns may use only `*` and `?` on top of those characters. Errors are
 * {@link ConfigError}s whose path points at the offending entry.
 */
import { ConfigError } from '../../errors/raven-error.js';

/** The ways to write a scope: one entry, several, or nothing (all namespaces). */
export type NamespaceScopeSpec = string | readonly string[] | undefined;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const PATTERN = /^[-a-z0-9*?]+$/;
const MAX_NAME = 63;

/**
 * A validated namespace scope with its matcher.
 *
 * @example
 * const scope = parseNamespaceScope(['team-*', '!team-legacy']);
 * scope.matches('team-a'); // => true
 * scope.matches('team-legacy'); // => false
 */
export class NamespaceScope {
  /** Exact namespaces included. */
  readonly names: readonly string[];
  /** Glob patterns included. */
  readonly patterns: readonly string[];
  /** Exact namespaces excluded. */
  readonly excludedNames: readonly string[];
  /** Glob patterns excluded. */
  readonly excludedPatterns: readonly string[];
  readonly #include: readonly RegExp[];
  readonly #exclude: readonly RegExp[];

  constructor(entries: {
    names: string[];
    patterns: string[];
    excludedNames: string[];
    excludedPatterns: string[];
  }) {
    this.names = entries.names;
    this.patterns = entries.patterns;
    this.excludedNames = entries.excludedNames;
    this.excludedPatterns = entries.excludedPatterns;
    this.#include = entries.patterns.map(globToRegExp);
    this.#exclude = entries.excludedPatterns.map(globToRegExp);
  }

  /** True when no inclusion narrows the scope (exclusions may still apply). */
  get includesAll(): boolean {
    return this.names.length === 0 && this.patterns.length === 0;
  }

  /** True when every namespace is in scope. */
  get isAll(): boolean {
    return this.includesAll && this.excludedNames.length === 0 && this.excludedPatterns.length === 0;
  }

  /** Whether `namespace` is in scope. */
  matches(namespace: string): boolean {
    const included =
      this.includesAll || this.names.includes(namespace) || this.#include.some((re) => re.test(namespace));
    return (
      included && !this.excludedNames.includes(namespace) && !this.#exclude.some((re) => re.test(namespace))
    );
  }
}

function globToRegExp(pattern: string): RegExp {
  // Patterns hold only [-a-z0-9*?], so no other character needs escaping.
  return new RegExp(`^${pattern.replaceAll('*', '[-a-z0-9]*').replaceAll('?', '[-a-z0-9]')}$`);
}

/** What is wrong with one entry (without its `!`), or undefined. */
function entryProblem(entry: string, excluded: boolean): string | undefined {
  const shown = JSON.stringify(excluded ? `!${entry}` : entry);
  if (entry === '')
    return excluded ? `${shown} excludes nothing: write !name or !pattern` : 'empty namespace';
  if (/[*?]/.test(entry)) {
    if (!PATTERN.test(entry)) {
      return `pattern ${shown} may contain only a-z, 0-9, '-', '*' (any run of characters) and '?' (one character)`;
    }
    if (excluded && /^\*+$/.test(entry)) return `${shown} would exclude every namespace`;
    return undefined;
  }
  if (entry.length > MAX_NAME || !DNS_LABEL.test(entry)) {
    return `namespace ${shown} must be at most 63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit`;
  }
  return undefined;
}

/**
 * Parse and validate a scope. `path` and `file` locate the setting in errors.
 *
 * @example
 * parseNamespaceScope('*').isAll; // => true
 * parseNamespaceScope(['prod', 'Staging'], { path: 'watch.namespaces' });
 * // throws ConfigError: watch.namespaces[1]: namespace "Staging" must be ...
 */
export function parseNamespaceScope(
  spec: NamespaceScopeSpec,
  options: { path?: string; file?: string } = {},
): NamespaceScope {
  const list = spec === undefined ? [] : typeof spec === 'string' ? [spec] : spec;
  const scope = {
    names: [] as string[],
    patterns: [] as string[],
    excludedNames: [] as string[],
    excludedPatterns: [] as string[],
  };
  for (const [index, raw] of list.entries()) {
    const path = typeof spec === 'string' ? options.path : `${options.path ?? ''}[${index}]`;
    const entry = raw.trim();
    const excluded = entry.startsWith('!');
    const body = excluded ? entry.slice(1) : entry;
    const problem = entryProblem(body, excluded);
    if (problem !== undefined) throw new ConfigError(problem, { path, file: options.file });
    if (!excluded && /^\*+$/.test(body)) continue; // `*`: all namespaces, the default
    const isPattern = /[*?]/.test(body);
    const target = excluded
      ? isPattern
        ? scope.excludedPatterns
        : scope.excludedNames
      : isPattern
        ? scope.patterns
        : scope.names;
    if (!target.includes(body)) target.push(body);
  }
  if (scope.patterns.length === 0 && scope.names.length > 0) {
    const result = new NamespaceScope(scope);
    if (scope.names.every((name) => !result.matches(name))) {
      throw new ConfigError('every namespace listed is also excluded, so nothing would be watched', options);
    }
  }
  return new NamespaceScope(scope);
}
