/**
 * Output templates in kubectl's JSONPath syntax, for `-o jsonpath=...` and `-o custom-columns=...`:
 * text with `{expression}` blocks, `{"\n"}` / `{'\t'}` literals, `{range EXPR}...{end}` loops.
 * Expressions are relative to the current object (`.metadata.name`, `$` for the root, `@` inside
 * filters) and may use wildcards, recursive descent (`..`), slices, unions, quoted keys
 * (`['app.kubernetes.io/name']`) and filters (`[?(@.type=="Ready")]`).
 *
 * Paths are read as kubectl reads them: `\` escapes a character in a name (`{.data.app\.yaml}`,
 * `{.metadata.labels.app\.kubernetes\.io/name}`), `['a.b']` is the key `a.b` when the object has
 * it and otherwise kubectl's reading of it (the path `.a.b`), so the union `['metadata.name',
 * 'status.phase']` selects both paths, results grouped by branch as kubectl groups them. Each step
 * (a key, `[*]`, an index or slice, a filter, `..`) is evaluated by jsonpath-plus (safe
 * evaluation: filters are interpreted, never run as code); this file parses kubectl's syntax
 * around them and prints results as kubectl does: several results joined by a space, strings as
 * they are, objects as JSON, a missing field as nothing.
 */
import { JSONPath } from 'jsonpath-plus';

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'expr'; path: KubePath }
  | { kind: 'range'; path: KubePath; body: Node[] };

/** A template that does not parse; `message` says where and what would be valid. */
export class TemplateError extends Error {
  override name = 'TemplateError';
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'" };

function unquote(literal: string): string {
  return literal.slice(1, -1).replace(/\\(.)/g, (_, c: string) => ESCAPES[c] ?? c);
}

/** A kubectl path (`.a.b`, `$`, `@`, `['k']`, `..name`) as steps; a clear error for anything else. */
function toJsonPath(expression: string, template: string): KubePath {
  const e = expression.trim();
  if (e === '' || e === '.' || e === '$' || e === '@') return [];
  if (/^[$@.[]/.test(e)) return parsePathSteps(e, template);
  throw new TemplateError(
    `"${e}" in ${JSON.stringify(template)} is not a JSONPath expression: start it with "." (e.g. {.metadata.name}) or quote text as {"${e}"}`,
  );
}

/**
 * One step of a kubectl path: a jsonpath-plus fragment applied to each current value (`['name']`,
 * `[*]`, `[0]`, `[1:3]`, `[?(@.type=="Ready")]`, `..['name']`), a union of sub-paths, or a quoted
 * key (`['app.yaml']`): the key as written when the object has it, else kubectl's reading of it
 * as a path (`['metadata.name']` is `.metadata.name` to kubectl).
 */
type Step =
  | { kind: 'fragment'; fragment: string }
  | { kind: 'union'; branches: Step[][] }
  | { kind: 'quoted'; key: string; path: Step[] };

/** A compiled kubectl path: the steps from the current object. */
export type KubePath = readonly Step[];

const NAME_END = new Set(['.', '[', ']', ',', ' ', '\t', '\n', '$', '@', '{', '}']);

/** `.a.b\.c` from `at`: the name with its escapes removed, and where it ends. */
function readName(e: string, at: number): { name: string; end: number } {
  let name = '';
  let i = at;
  while (i < e.length && !NAME_END.has(e[i] ?? '')) {
    if (e[i] === '\\' && i + 1 < e.length) i++;
    name += e[i] ?? '';
    i++;
  }
  return { name, end: i };
}

/** The index of the `]` closing the `[` at `at`, skipping quotes and parentheses. */
function closingBracket(e: string, at: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = at; i < e.length; i++) {
    const c = e[i];
    if (quote !== undefined) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') {
      depth--;
      if (depth === 0 && c === ']') return i;
    }
  }
  return -1;
}

/** jsonpath-plus's bracket form of a key (its quoted form cannot hold a quote or a bracket). */
function keyFragment(key: string): string {
  return /['"\]]/.test(key) ? `[${JSON.stringify(key)}]` : `['${key}']`;
}

function bracketSteps(inner: string, whole: string): Step[] {
  const text = inner.trim();
  if (text === '*') return [{ kind: 'fragment', fragment: '[*]' }];
  if (text.startsWith('?')) return [{ kind: 'fragment', fragment: `[${text}]` }];
  const parts = splitTopLevel(text);
  if (parts.length > 1) return [{ kind: 'union', branches: parts.map((p) => bracketSteps(p.trim(), whole)) }];
  const quoted = /^(["'])(.*)\1$/s.exec(text);
  if (quoted !== null) {
    const raw = quoted[2] ?? '';
    const key = raw.replace(/\\(.)/g, '$1');
    return [{ kind: 'quoted', key, path: parsePathSteps(`.${raw}`, whole) }];
  }
  if (/^-?\d*(:-?\d*){0,2}$/.test(text) && text !== '') return [{ kind: 'fragment', fragment: `[${text}]` }];
  throw new TemplateError(
    `[${inner}] in ${JSON.stringify(whole)} is not a valid subscript: use [0], [1:3], [*], ['key'], [?(@.field=="value")] or a union ['a','b']`,
  );
}

/** Split on commas outside quotes, brackets and parentheses. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** kubectl's path syntax (`.a.b\.c`, `..name`, `[*]`, `['a.b']`, `[?(...)]`, `$`, `@`) as steps. */
function parsePathSteps(expression: string, whole: string): Step[] {
  const steps: Step[] = [];
  let e = expression.trim();
  if (e.startsWith('$') || e.startsWith('@')) e = e.slice(1);
  let i = 0;
  while (i < e.length) {
    const c = e[i];
    if (c === '.' && e[i + 1] === '.') {
      const next = e[i + 2];
      if (next === '[') {
        const close = closingBracket(e, i + 2);
        if (close < 0) throw unclosedBracket(whole);
        const inner = e.slice(i + 3, close).trim();
        steps.push({ kind: 'fragment', fragment: `..[${inner}]` });
        i = close + 1;
      } else {
        const { name, end } = readName(e, i + 2);
        steps.push({
          kind: 'fragment',
          fragment: name === '*' || name === '' ? '..[*]' : `..${keyFragment(name)}`,
        });
        i = end;
      }
    } else if (c === '.') {
      const { name, end } = readName(e, i + 1);
      if (name === '*') steps.push({ kind: 'fragment', fragment: '[*]' });
      else if (name !== '') steps.push({ kind: 'fragment', fragment: keyFragment(name) });
      i = end;
    } else if (c === '[') {
      const close = closingBracket(e, i);
      if (close < 0) throw unclosedBracket(whole);
      steps.push(...bracketSteps(e.slice(i + 1, close), whole));
      i = close + 1;
    } else if (c === ' ' || c === '\t') i++;
    else
      throw new TemplateError(
        `unexpected "${c}" at "${e.slice(i)}" in ${JSON.stringify(whole)}: a path is .field, ..field, [index], ['key'] or [?(filter)]`,
      );
  }
  return steps;
}

function unclosedBracket(whole: string): TemplateError {
  return new TemplateError(`unclosed "[" in ${JSON.stringify(whole)}: each [ needs its ]`);
}

/** The end of the `{...}` block opened at `start`, skipping quoted strings. */
function closingBrace(template: string, start: number): number {
  let quote: string | undefined;
  for (let i = start + 1; i < template.length; i++) {
    const c = template[i];
    if (quote !== undefined) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '}') return i;
    else if (c === '{') break;
  }
  throw new TemplateError(
    `unclosed "{" at position ${start + 1} of ${JSON.stringify(template)}: each {expression} needs its "}"`,
  );
}

/** Parse a template; throws a TemplateError naming the position of what is wrong. */
export function parseTemplate(template: string): Node[] {
  const root: Node[] = [];
  const stack: { body: Node[]; at: number }[] = [{ body: root, at: 0 }];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    const current = stack[stack.length - 1]?.body ?? root;
    if (open < 0) {
      current.push({ kind: 'text', text: template.slice(i) });
      break;
    }
    if (open > i) current.push({ kind: 'text', text: template.slice(i, open) });
    const close = closingBrace(template, open);
    const inner = template.slice(open + 1, close).trim();
    if (/^(["']).*\1$/s.test(inner)) current.push({ kind: 'text', text: unquote(inner) });
    else if (inner === 'end') {
      if (stack.length === 1)
        throw new TemplateError(
          `{end} at position ${open + 1} of ${JSON.stringify(template)} has no {range ...}`,
        );
      stack.pop();
    } else if (inner.startsWith('range ')) {
      const node: Node = { kind: 'range', path: toJsonPath(inner.slice(6), template), body: [] };
      current.push(node);
      stack.push({ body: node.body, at: open });
    } else current.push({ kind: 'expr', path: toJsonPath(inner, template) });
    i = close + 1;
  }
  const unclosed = stack[stack.length - 1];
  if (stack.length > 1 && unclosed !== undefined)
    throw new TemplateError(
      `{range} at position ${unclosed.at + 1} of ${JSON.stringify(template)} has no {end}`,
    );
  return root;
}

/** Every value `path` selects in `json` (none when a field is missing). */
export function select(path: KubePath, json: unknown): unknown[] {
  return selectFrom(path, [json]);
}

function selectFrom(path: KubePath, values: unknown[]): unknown[] {
  let current = values;
  for (const [i, step] of path.entries()) {
    if (step.kind === 'union') {
      const rest = path.slice(i + 1);
      return step.branches.flatMap((branch) => selectFrom([...branch, ...rest], current));
    }
    current = current.flatMap((value) => applyStep(step, value));
  }
  return current;
}

function applyStep(step: Exclude<Step, { kind: 'union' }>, value: unknown): unknown[] {
  if (value === null || typeof value !== 'object') return [];
  if (step.kind === 'quoted')
    return !Array.isArray(value) && Object.hasOwn(value, step.key)
      ? [(value as Record<string, unknown>)[step.key]]
      : select(step.path, value);
  return JSONPath<unknown[]>({ path: `$${step.fragment}`, json: value, wrap: true, eval: 'safe' });
}

/** A selected value as kubectl prints it. */
export function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  // Nothing JSON cannot hold comes from parsed JSON; numbers and booleans print as themselves,
  // objects and lists as JSON.
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return '';
  return JSON.stringify(value);
}

function run(nodes: readonly Node[], current: unknown): string {
  let out = '';
  for (const node of nodes) {
    if (node.kind === 'text') out += node.text;
    else if (node.kind === 'expr') out += select(node.path, current).map(valueText).join(' ');
    else for (const item of select(node.path, current)) out += run(node.body, item);
  }
  return out;
}

/**
 * A compiled template.
 *
 * @example
 * const t = compileTemplate('{.metadata.name}{"\t"}{.status.phase}{"\n"}');
 * t({ metadata: { name: 'web-0' }, status: { phase: 'Running' } }); // 'web-0\tRunning\n'
 */
export function compileTemplate(template: string): (object: unknown) => string {
  const nodes = parseTemplate(template);
  // A path jsonpath-plus cannot evaluate fails here, before any request, not on the first object.
  run(nodes, { metadata: {} });
  return (object) => run(nodes, object);
}

export interface CustomColumn {
  header: string;
  path: KubePath;
}

/**
 * One path as kubectl's custom columns and `--sort-by` take it: `.metadata.name`,
 * `{.metadata.name}` or `metadata.name`; throws a TemplateError quoting `where` when it is not one.
 */
export function parseRelaxedPath(text: string, where = text): KubePath {
  const raw = text.trim();
  const braced = raw.startsWith('{') && raw.endsWith('}') ? raw.slice(1, -1).trim() : raw;
  // kubectl takes `metadata.name` for `.metadata.name` here.
  const expression = /^[$@.[]/.test(braced) ? braced : `.${braced}`;
  const path = toJsonPath(expression, where);
  // A path jsonpath-plus cannot evaluate fails here, before any request.
  select(path, { metadata: {} });
  return path;
}

/** `NAME:.metadata.name,IMAGE:.spec.containers[*].image`, as kubectl takes them. */
export function parseCustomColumns(spec: string): CustomColumn[] {
  const columns = splitColumns(spec).map((part) => {
    const colon = part.indexOf(':');
    if (colon <= 0 || colon === part.length - 1)
      throw new TemplateError(`custom column "${part}" must be HEADER:JSONPATH, e.g. NAME:.metadata.name`);
    return { header: part.slice(0, colon).trim(), path: parseRelaxedPath(part.slice(colon + 1), part) };
  });
  if (columns.length === 0)
    throw new TemplateError('custom-columns needs at least one HEADER:JSONPATH, e.g. NAME:.metadata.name');
  return columns;
}

/** Split on commas that are not inside brackets or quotes (`[?(@.a=="x,y")]`, `['a','b']`). */
function splitColumns(spec: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < spec.length; i++) {
    const c = spec[i];
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(spec.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(spec.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

/**
 * One custom column's cell: every selected value, comma-separated; `<none>` when there is none.
 * A value of several lines (a config file in a ConfigMap) shows on one, so the table stays a table.
 */
export function columnText(column: CustomColumn, object: unknown): string {
  const values = select(column.path, object);
  if (values.length === 0) return '<none>';
  return values
    .map(valueText)
    .join(',')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}
