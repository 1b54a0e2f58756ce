/**
 * Field-level diffs between two states of an object: which paths were added, removed or replaced,
 * with old and new values, leaving out noise (fields that change on every write and say nothing
 * to a reader: resourceVersion, managedFields, ...).
 *
 * Paths are dotted, with `[i]` for list items: `spec.template.spec.containers[0].image`. Keys that
 * are not plain identifiers are quoted: `metadata.labels["app.kubernetes.io/name"]`. Lists of
 * objects that all carry a `name` (containers, ports, env, conditions by `type`) are matched by that
 * name rather than position, so inserting one item does not report every later item as changed;
 * such items are addressed as `containers[name=web]`.
 *
 * Printed ({@link formatDiff}), a changed multi-line string (a ConfigMap's file, a script) is a
 * line diff inside the value, with `@@` hunks and 3 lines of context, and a long one-line string
 * is shown around its first difference: no value is cut before the part that changed.
 */
import { structuredPatch } from 'diff';
import type { DiffEntry } from './change-event.js';

/** Paths left out by default. A trailing `.*` matches everything below. */
export const DEFAULT_IGNORED_PATHS: readonly string[] = [
  'metadata.resourceVersion',
  'metadata.managedFields',
  'metadata.generation',
  'metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]',
  'metadata.annotations["deployment.kubernetes.io/revision"]',
];

export interface DiffOptions {
  /** Paths (or `prefix.*`) to leave out, in addition to the defaults unless `replaceDefaults`. */
  ignore?: readonly string[];
  replaceDefaults?: boolean;
  /** Stop after this many entries (a diff of a rewritten object is not useful in full). Default 200. */
  maxEntries?: number;
}

type Json = unknown;

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function childPath(parent: string, key: string): string {
  const part = IDENT.test(key) ? key : `[${JSON.stringify(key)}]`;
  if (parent === '') return part.startsWith('[') ? part : part;
  return part.startsWith('[') ? `${parent}${part}` : `${parent}.${part}`;
}

function isObject(value: Json): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The field that identifies list items, when every item of both lists has it. */
function identityField(a: Json[], b: Json[]): string | undefined {
  for (const field of ['name', 'type', 'containerPort', 'mountPath', 'key']) {
    const all = [...a, ...b];
    if (all.length === 0) return undefined;
    const ids = all.map((item) => (isObject(item) ? item[field] : undefined));
    if (ids.every((id) => typeof id === 'string' || typeof id === 'number')) {
      const unique = (list: Json[]): boolean =>
        new Set(list.map((item) => (item as Record<string, Json>)[field])).size === list.length;
      if (unique(a) && unique(b)) return field;
    }
  }
  return undefined;
}

/**
 * Ignore patterns: an exact path ignores it and everything below it; `[*]` stands for any list
 * item (`status.conditions[*].lastHeartbeatTime`); a trailing `.*` is the same as the path itself.
 * All patterns become one regular expression, so a path costs one test however many there are.
 */
function compile(patterns: readonly string[]): (path: string) => boolean {
  const sources = patterns.map((p) => {
    const base = p.endsWith('.*') ? p.slice(0, -2) : p;
    return base
      .split('[*]')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('\\[[^\\]]*\\]');
  });
  if (sources.length === 0) return () => false;
  const regex = new RegExp(`^(?:${sources.join('|')})(?:$|[.[])`);
  return (path) => regex.test(path);
}

const defaultsOnly = compile(DEFAULT_IGNORED_PATHS);
/**
 * Compiled ignore lists, by their text: the daemon passes the same list (its config's
 * `diff.ignore`) for every change, so it is compiled once, not per diff. Bounded, for callers that
 * pass a new list each time.
 */
const compiled = new Map<string, (path: string) => boolean>();
const MAX_COMPILED = 64;

function ignoredPaths(options: DiffOptions): (path: string) => boolean {
  const replace = options.replaceDefaults === true;
  const extra = options.ignore ?? [];
  if (extra.length === 0) return replace ? () => false : defaultsOnly;
  const id = `${replace ? 'only' : 'defaults'}\n${extra.join('\n')}`;
  let ignored = compiled.get(id);
  if (ignored === undefined) {
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    ignored = compile([...(replace ? [] : DEFAULT_IGNORED_PATHS), ...extra]);
    compiled.set(id, ignored);
  }
  return ignored;
}

/**
 * Whether two JSON values are equal, key order aside: such values have no diff, so a subtree that
 * did not change is compared without building a path for each field in it (most of an object, in
 * most changes).
 */
function sameJson(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const x = a as Record<string, Json>;
  const y = b as Record<string, Json>;
  let count = 0;
  for (const key in x) {
    if (!Object.hasOwn(x, key)) continue;
    if (!Object.hasOwn(y, key) || !sameJson(x[key], y[key])) return false;
    count++;
  }
  for (const key in y) if (Object.hasOwn(y, key)) count--;
  return count === 0;
}

/**
 * Compare two states.
 *
 * @example
 * diffObjects({ spec: { replicas: 2 } }, { spec: { replicas: 3 } });
 * // => [{ path: 'spec.replicas', op: 'replace', old: 2, new: 3 }]
 */
export function diffObjects(before: Json, after: Json, options: DiffOptions = {}): DiffEntry[] {
  const ignored = ignoredPaths(options);
  const max = options.maxEntries ?? 200;
  const out: DiffEntry[] = [];
  const walk = (a: Json, b: Json, path: string): void => {
    if (out.length >= max || a === b || (path !== '' && ignored(path))) return;
    // A whole map appearing or vanishing is shown key by key, so ignored keys inside it (an
    // annotation that is noise) stay out; a list item appearing or vanishing is one entry.
    const descend = (value: Json): boolean =>
      isObject(value) && Object.keys(value).length > 0 && !path.endsWith(']');
    if (a === undefined) {
      if (descend(b)) walk({}, b, path);
      else out.push({ path, op: 'add', new: b });
      return;
    }
    if (b === undefined) {
      if (descend(a)) walk(a, {}, path);
      else out.push({ path, op: 'remove', old: a });
      return;
    }
    if (isObject(a) && isObject(b)) {
      const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
      for (const key of [...keys].sort())
        if (!sameJson(a[key], b[key])) walk(a[key], b[key], childPath(path, key));
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      if (sameJson(a, b)) return;
      const id = identityField(a, b);
      if (id === undefined) {
        const n = Math.max(a.length, b.length);
        for (let i = 0; i < n; i++) walk(a[i], b[i], `${path}[${i}]`);
        return;
      }
      const index = (list: Json[]): Map<string, Json> =>
        new Map(list.map((item) => [String((item as Record<string, Json>)[id]), item]));
      const before = index(a);
      const after = index(b);
      for (const key of new Set([...before.keys(), ...after.keys()]))
        walk(before.get(key), after.get(key), `${path}[${id}=${key}]`);
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path, op: 'replace', old: a, new: b });
  };
  walk(before, after, '');
  return out;
}

/** True when some entry's path is `prefix` or below it. */
export function touches(diff: readonly DiffEntry[], prefix: string): boolean {
  return diff.some(
    (d) => d.path === prefix || d.path.startsWith(`${prefix}.`) || d.path.startsWith(`${prefix}[`),
  );
}

/** Longest value shown whole on one line; longer ones are cut around what changed. */
const MAX_VALUE_CHARS = 120;
/** Characters of unchanged text shown on each side of a change inside a long one-line string. */
const AROUND_CHARS = 40;
/** Lines of unchanged context around each change inside a multi-line string, as `diff -u` shows. */
const CONTEXT_LINES = 3;

function show(value: unknown): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 3)}...` : text;
}

/** Two long one-line strings, each cut to the stretch around their first difference. */
function aroundChange(before: string, after: string): [string, string] {
  const a = JSON.stringify(before);
  const b = JSON.stringify(after);
  let start = 0;
  while (start < a.length && a[start] === b[start]) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end])
    end++;
  const cut = (text: string): string => {
    const from = Math.max(0, start - AROUND_CHARS);
    const changedEnd = text.length - end;
    const to = Math.min(text.length, Math.max(changedEnd, start) + AROUND_CHARS, from + MAX_VALUE_CHARS * 2);
    return `${from > 0 ? '…' : ''}${text.slice(from, to)}${to < text.length ? '…' : ''}`;
  };
  return [cut(a), cut(b)];
}

/** The lines of a change inside a multi-line string: a summary, then `@@` hunks. */
function lineDiff(path: string, before: string, after: string): string[] {
  const patch = structuredPatch('', '', before, after, '', '', { context: CONTEXT_LINES });
  const count = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  const out = [`${path}: text changed (${count(before)} → ${count(after)} lines)`];
  for (const hunk of patch.hunks) {
    out.push(`  @@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`);
    // jsdiff marks a missing final newline with a `\` line; the summary already says enough.
    for (const line of hunk.lines) if (!line.startsWith('\\')) out.push(`  ${line}`);
  }
  return out;
}

/**
 * The lines of each entry: one line (`spec.replicas: 2 → 3`), or for a changed multi-line string
 * a summary line and its hunks.
 */
export function formatDiffEntries(diff: readonly DiffEntry[]): string[][] {
  return diff.map((d) => {
    switch (d.op) {
      case 'add':
        return [`${d.path}: + ${show(d.new)}`];
      case 'remove':
        return [`${d.path}: - ${show(d.old)}`];
      case 'replace': {
        const { old: a, new: b } = d;
        if (typeof a === 'string' && typeof b === 'string') {
          if (a.includes('\n') || b.includes('\n')) return lineDiff(d.path, a, b);
          if (JSON.stringify(a).length > MAX_VALUE_CHARS || JSON.stringify(b).length > MAX_VALUE_CHARS) {
            const [x, y] = aroundChange(a, b);
            return [`${d.path}: ${x} → ${y}`];
          }
        }
        return [`${d.path}: ${show(a)} → ${show(b)}`];
      }
    }
  });
}

/**
 * The diff as lines: `spec.replicas: 2 → 3`, and line diffs inside changed multi-line strings.
 *
 * @example
 * formatDiff([{ path: 'data.conf', op: 'replace', old: 'a\nb\n', new: 'a\nc\n' }]);
 * // => ['data.conf: text changed (2 → 2 lines)', '  @@ -1,2 +1,2 @@', '   a', '  -b', '  +c']
 */
export function formatDiff(diff: readonly DiffEntry[]): string[] {
  return formatDiffEntries(diff).flat();
}
