/**
 * Output templates in kubectl's JSONPath syntax, for `-o jsonpath=...` and `-o custom-columns=...`:
 * text with `{expression}` blocks, `{"\n"}` / `{'\t'}` literals, `{range EXPR}...{end}` loops.
 * Expressions are relative to the current object (`.metadata.name`, `$` for the root, `@` inside
 * filters) and may use wildcards, recursive descent (`..`), slices, unions, quoted keys
 * (`['app.kubernetes.io/name']`) and filters (`[?(@.type=="Ready")]`).
 *
 * The expressions themselves are evaluated by jsonpath-plus (safe evaluation: filters are
 * interpreted, never run as code); this file parses kubectl's template syntax around them and
 * prints results as kubectl does: several results joined by a space, strings as they are, objects
 * as JSON, a missing field as nothing.
 */
import { JSONPath } from 'jsonpath-plus';

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'expr'; path: string }
  | { kind: 'range'; path: string; body: Node[] };

/** A template that does not parse; `message` says where and what would be valid. */
export class TemplateError extends Error {
  override name = 'TemplateError';
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'" };

function unquote(literal: string): string {
  return literal.slice(1, -1).replace(/\\(.)/g, (_, c: string) => ESCAPES[c] ?? c);
}

/** `.a.b` → `$.a.b`; `$...` and `@...` as they are. */
function toJsonPath(expression: string, template: string): string {
  const e = expression.trim();
  if (e === '' || e === '.' || e === '$' || e === '@') return '$';
  if (e.startsWith('$')) return e;
  if (e.startsWith('@')) return `$${e.slice(1)}`;
  if (e.startsWith('.') || e.startsWith('[')) return `$${e}`;
  throw new TemplateError(
    `"${e}" in ${JSON.stringify(template)} is not a JSONPath expression: start it with "." (e.g. {.metadata.name}) or quote text as {"${e}"}`,
  );
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
export function select(path: string, json: unknown): unknown[] {
  if (json === null || typeof json !== 'object') return path === '$' ? [json] : [];
  return JSONPath<unknown[]>({ path, json, wrap: true, eval: 'safe' });
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
  path: string;
}

/** `NAME:.metadata.name,IMAGE:.spec.containers[*].image`, as kubectl takes them. */
export function parseCustomColumns(spec: string): CustomColumn[] {
  const columns = splitColumns(spec).map((part) => {
    const colon = part.indexOf(':');
    if (colon <= 0 || colon === part.length - 1)
      throw new TemplateError(`custom column "${part}" must be HEADER:JSONPATH, e.g. NAME:.metadata.name`);
    const raw = part.slice(colon + 1).trim();
    const expression = raw.startsWith('{') && raw.endsWith('}') ? raw.slice(1, -1) : raw;
    const path = toJsonPath(expression, part);
    select(path, { metadata: {} });
    return { header: part.slice(0, colon).trim(), path };
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

/** One custom column's cell: every selected value, comma-separated; `<none>` when there is none. */
export function columnText(column: CustomColumn, object: unknown): string {
  const values = select(column.path, object);
  return values.length === 0 ? '<none>' : values.map(valueText).join(',');
}
