/**
 * A small text template over a change event: `{{path}}` is replaced with the value at a dotted
 * path of the event. Nothing is evaluated: a path is only looked up, one own property at a time,
 * so a template from a config file cannot run code or reach prototypes.
 *
 * - `{{type}}`, `{{resource.kind}}`, `{{namespace}}`, `{{object.metadata.labels.app}}`;
 * - keys that are not identifiers in brackets: `{{object.metadata.labels["app.kubernetes.io/name"]}}`;
 * - list items by index: `{{object.spec.containers[0].image}}`;
 * - `{{diff}}`: the diff as lines (`spec.replicas: 2 → 3`), one per line;
 * - `{{key}}`: `namespace/name` (or `name` for cluster-scoped objects).
 *
 * `escape` is applied to each substituted value (never to the template's own text), for formats
 * where event content must not be read as markup. Strings render as they are, numbers and booleans as text, objects and lists as JSON; a path that
 * leads nowhere renders empty.
 */
import { eventObjectKey, type ChangeEvent } from './change-event.js';
import { formatDiff } from './diff.js';

const PLACEHOLDER = /\{\{\s*([^{}\s][^{}]*?)\s*\}\}/g;
const SEGMENT = /^(?:\.?([A-Za-z_$][\w$-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\])/;

/**
 * @example
 * renderTemplate('{{type}} {{resource.kind}} {{key}}\n{{diff}}', event);
 * // => 'modified Deployment default/web\nspec.replicas: 2 → 3'
 */
export function renderTemplate(
  template: string,
  event: ChangeEvent,
  options: { escape?: (value: string) => string } = {},
): string {
  const escape = options.escape ?? ((value: string) => value);
  return template.replace(PLACEHOLDER, (_match, path: string) => {
    if (path === 'diff') return escape(formatDiff(event.diff).join('\n'));
    if (path === 'key') return escape(eventObjectKey(event));
    return escape(show(lookup(event, path)));
  });
}

/** The segments of a path, or undefined when it is not a well-formed path. */
export function parseTemplatePath(path: string): (string | number)[] | undefined {
  const out: (string | number)[] = [];
  let rest = path;
  while (rest !== '') {
    const m = SEGMENT.exec(rest);
    if (m === null || (out.length === 0 && m[0].startsWith('.'))) return undefined;
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined) out.push(Number(m[2]));
    else out.push(JSON.parse(m[3] ?? '""') as string);
    rest = rest.slice(m[0].length);
  }
  return out.length === 0 ? undefined : out;
}

function lookup(root: unknown, path: string): unknown {
  const segments = parseTemplatePath(path);
  if (segments === undefined) return undefined;
  let value = root;
  for (const segment of segments) {
    if (typeof segment === 'number') {
      value = Array.isArray(value) ? (value[segment] as unknown) : undefined;
    } else if (
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      Object.hasOwn(value, segment)
    ) {
      value = (value as Record<string, unknown>)[segment];
    } else {
      return undefined;
    }
  }
  return value;
}

function show(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
