/**
 * Loading `raven.yaml`: read, parse YAML, substitute environment variables, validate, resolve.
 *
 * Guarantees: the returned {@link RavenConfig} is complete (defaults applied, paths absolute,
 * routes explicit) and every selector and namespace pattern in it parses. Anything wrong is a
 * {@link ConfigError} naming the file, the field (`sinks[2].url`), its line and what would be
 * valid; several problems come together as one {@link ConfigAggregateError}, in file order, so
 * `raven check` shows them all at once. Resource names are not checked here: that needs discovery.
 */
import { readFile } from 'node:fs/promises';
import { hostname, homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument, isMap, isScalar, isSeq, type Document } from 'yaml';
import type * as z from 'zod';
import { ConfigError } from '../../errors/raven-error.js';
import { ConfigAggregateError } from '../../errors/config-aggregate-error.js';
import { formatConfigPath, isWithin, valueAt, type ConfigPath } from '../../errors/config-path.js';
import { configWarnings } from './config-warnings.js';
import { crossReferenceProblems } from './cross-references.js';
import { coerceSubstituted, substituteEnvironment, type Environment } from './env-substitution.js';
import { finalizeConfig } from './finalize-config.js';
import { expectationMap, issueProblems, type Problem } from './issue-message.js';
import { ravenConfigSchema, type RavenConfig } from './raven-config-schema.js';
import { configStateDir, STATE_DIR_ENV } from '../model/state-dir.js';

export interface LoadRavenConfigOptions {
  /** Variables for `${VAR}`; default `process.env`. */
  env?: Environment;
  /** For `~` in paths; default `HOME` from `env`, else the user's home directory. */
  homeDir?: string;
  /** Leader election identity when the file sets none; default `<hostname>-<pid>`. */
  defaultIdentity?: string;
  /** Valid but suspicious settings (a sink no route feeds, ...), as errors with a path; default: ignored. */
  onWarning?: (warning: ConfigError) => void;
}

export interface ParseRavenConfigOptions extends LoadRavenConfigOptions {
  /** The file name shown in messages; default none. */
  file?: string;
  /** Relative paths are resolved against this; default the file's directory, else the working directory. */
  baseDir?: string;
}

/**
 * Read and validate a config file.
 *
 * @example
 * const config = await loadRavenConfig('raven.yaml', { env: process.env });
 * config.sinks[0]?.delivery.maxAttempts; // => 8 unless the file says otherwise
 */
export async function loadRavenConfig(
  file: string,
  options: LoadRavenConfigOptions = {},
): Promise<RavenConfig> {
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String(error);
    throw new ConfigError(`cannot read the config file: ${reason}`, { file, cause: error });
  }
  return parseRavenConfig(source, { ...options, file, baseDir: dirname(resolve(file)) });
}

/**
 * Validate config text; what {@link loadRavenConfig} does after reading the file.
 *
 * @example
 * parseRavenConfig('watchers: [{ name: pods, resource: pods }]\nsinks: [{ name: out, type: stdout }]\n');
 */
export function parseRavenConfig(source: string, options: ParseRavenConfigOptions = {}): RavenConfig {
  const file = options.file;
  const env = options.env ?? process.env;
  const lines = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lines, merge: true, prettyErrors: false });
  const [syntax] = doc.errors;
  if (syntax !== undefined) {
    // Only the first: later syntax errors mostly follow from it and would bury it.
    const { line, col } = lines.linePos(syntax.pos[0]);
    const more = doc.errors.length - 1;
    const rest = more > 0 ? ` (and ${more} more after it, which may follow from this one)` : '';
    const first = syntax.message.split('\n')[0] ?? syntax.message;
    throw new ConfigError(`YAML syntax error at line ${line}, column ${col}: ${first}${rest}`, {
      file,
      cause: syntax,
    });
  }
  const homeDir = options.homeDir ?? env.HOME ?? homedir();
  // `${RAVEN_STATE_DIR}`: the config's own state directory unless the environment chooses one.
  const substitution = substituteEnvironment(doc, {
    ...env,
    [STATE_DIR_ENV]: configStateDir(file, env, homeDir),
  });
  const raw: unknown = doc.toJS({ maxAliasCount: 1000 }) ?? {};
  const problems: Problem[] = [];
  const variablesAt = (path: ConfigPath): string[] =>
    substitution.substituted.find((s) => formatConfigPath(s.path) === formatConfigPath(path))?.variables ??
    [];

  let result = ravenConfigSchema.safeParse(raw, { error: expectationMap });
  if (!result.success && coerce(raw, result.error.issues, variablesAt)) {
    result = ravenConfigSchema.safeParse(raw, { error: expectationMap });
  }
  if (!result.success) {
    for (const issue of result.error.issues) {
      problems.push(...issueProblems(issue, (path) => valueAt(raw, path), variablesAt));
    }
  }
  problems.push(...crossReferenceProblems(raw));
  // A field whose variable is missing still holds "${VAR}"; its other errors would only confuse.
  const broken = substitution.problems.map((p) => p.path);
  const errors = dedupe([
    ...substitution.problems,
    ...problems.filter((p) => !broken.some((b) => isWithin(p.path, b))),
  ]);
  if (errors.length > 0 || !result.success) {
    throw collect(
      sortByPosition(errors, doc).map((p) => located(p, doc, lines, file)),
      file,
    );
  }
  const config = finalizeConfig(result.data, {
    baseDir: options.baseDir ?? process.cwd(),
    homeDir,
    identity: options.defaultIdentity ?? `${hostname()}-${process.pid}`,
  });
  if (options.onWarning !== undefined) {
    const warnings = configWarnings(config);
    if (!(typeof raw === 'object' && raw !== null && 'checkpoint' in raw)) {
      warnings.push({
        path: ['checkpoint'],
        message:
          "not set, so checkpoints are kept in memory: changes made while raven is stopped are not reported after a restart; set checkpoint: { path: '${RAVEN_STATE_DIR}/raven-state.db' } to keep them",
      });
    }
    for (const warning of sortByPosition(warnings, doc))
      options.onWarning(located(warning, doc, lines, file));
  }
  return config;
}

/**
 * Convert substituted strings where the schema wanted a number or boolean (`port: ${PORT}`).
 * Answers whether anything changed, so the caller validates again.
 */
function coerce(
  raw: unknown,
  issues: readonly z.core.$ZodIssue[],
  variablesAt: (p: ConfigPath) => string[],
): boolean {
  let changed = false;
  for (const issue of issues) {
    if (issue.code !== 'invalid_type' || issue.path.length === 0) continue;
    const expected =
      issue.expected === 'boolean'
        ? 'boolean'
        : issue.expected === 'number' || issue.expected === 'int'
          ? 'number'
          : undefined;
    const path = issue.path as ConfigPath;
    const value = valueAt(raw, path);
    if (expected === undefined || typeof value !== 'string' || variablesAt(path).length === 0) continue;
    const coerced = coerceSubstituted(value, expected);
    if (coerced === undefined) continue;
    (valueAt(raw, path.slice(0, -1)) as Record<PropertyKey, unknown>)[path[path.length - 1] as PropertyKey] =
      coerced;
    changed = true;
  }
  return changed;
}

function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${formatConfigPath(p.path)}\n${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Offset of the node a path names: the key for a mapping entry, the item for a list entry. */
function offsetOf(doc: Document, path: ConfigPath): number | undefined {
  let node: unknown = doc.contents;
  let offset: number | undefined = undefined;
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === key);
      if (pair === undefined) break;
      offset = isScalar(pair.key) ? pair.key.range?.[0] : offset;
      node = pair.value;
    } else if (isSeq(node) && typeof key === 'number') {
      const item: unknown = node.items[key];
      if (item === undefined) break;
      offset = isScalar(item) || isMap(item) || isSeq(item) ? item.range?.[0] : offset;
      node = item;
    } else break;
  }
  return offset;
}

/** Problems in the order of the file, so the first listed is the first to fix. */
function sortByPosition<T extends Problem>(items: T[], doc: Document): T[] {
  const at = (p: Problem): number => offsetOf(doc, p.path) ?? Number.MAX_SAFE_INTEGER;
  return items
    .map((item, index) => ({ item, index, offset: at(item) }))
    .sort((a, b) => a.offset - b.offset || a.index - b.index)
    .map((x) => x.item);
}

function located(problem: Problem, doc: Document, lines: LineCounter, file: string | undefined): ConfigError {
  const offset = offsetOf(doc, problem.path);
  const where =
    offset === undefined ? '' : (({ line, col }) => ` (line ${line}, column ${col})`)(lines.linePos(offset));
  return new ConfigError(`${problem.message}${where}`, { path: formatConfigPath(problem.path), file });
}

/** One error as itself, several as an aggregate. */
function collect(errors: ConfigError[], file: string | undefined): ConfigError {
  const [only] = errors;
  return errors.length === 1 && only !== undefined ? only : new ConfigAggregateError(errors, { file });
}
