/**
 * Checks the message templates of chat sinks when the config is loaded, so a mistyped placeholder
 * fails `raven check` instead of printing an empty field at three in the morning.
 *
 * Syntax: `{{path}}` (spaces inside the braces allowed) where path is a field of the change event:
 * `type`, `resource.kind`, `namespace`, `object.spec.replicas`, ... Fields under `object` and
 * `previous` are free-form (they are Kubernetes objects); the rest are checked by name.
 */
import { didYouMean } from '../../util/did-you-mean.js';

/** Top-level change event fields a template may name; `true` marks free-form objects. */
const FIELDS: Readonly<Record<string, readonly string[] | true>> = {
  id: [],
  watcher: [],
  type: [],
  origin: [],
  resource: ['group', 'version', 'resource', 'kind'],
  namespace: [],
  name: [],
  /** `namespace/name`, or `name` when cluster-scoped. */
  key: [],
  uid: [],
  resourceVersion: [],
  object: true,
  previous: true,
  diff: [],
  tombstone: [],
  time: [],
  /** Events watchers only (docs/events.md); empty for other changes. */
  occurrence: true,
};

/** The placeholder names a template may use, for documentation and messages. */
export const TEMPLATE_FIELDS: readonly string[] = Object.entries(FIELDS).flatMap(([field, children]) =>
  children === true ? [`${field}.*`] : children.length === 0 ? [field] : children.map((c) => `${field}.${c}`),
);

/** What is wrong with a template, or undefined when every placeholder names a field. */
export function templateProblem(template: string): string | undefined {
  let from = 0;
  for (;;) {
    const open = template.indexOf('{{', from);
    if (open < 0) return undefined;
    const close = template.indexOf('}}', open + 2);
    if (close < 0) return `unclosed "{{" at position ${open}; placeholders are written {{field}}`;
    const path = template.slice(open + 2, close).trim();
    const problem = placeholderProblem(path);
    if (problem !== undefined) return `placeholder {{${path}}} at position ${open}: ${problem}`;
    from = close + 2;
  }
}

function placeholderProblem(path: string): string | undefined {
  if (path === '') return 'empty placeholder';
  const [root = '', child, ...rest] = path.split(/[.[]/);
  const children = FIELDS[root];
  if (children === undefined) {
    return `unknown field ${JSON.stringify(root)}${didYouMean(root, Object.keys(FIELDS))}; valid: ${TEMPLATE_FIELDS.join(', ')}`;
  }
  if (children === true)
    return child === undefined || child === ''
      ? `name a field below ${root}, like ${root}.metadata.name`
      : undefined;
  if (child === undefined) {
    if (children.length === 0) return undefined;
    return `${root} is an object; name one of its fields: ${children.map((c) => `${root}.${c}`).join(', ')}`;
  }
  if (!children.includes(child) || rest.length > 0) {
    const valid =
      children.length === 0
        ? `${root} has no fields`
        : `valid: ${children.map((c) => `${root}.${c}`).join(', ')}`;
    return `unknown field ${JSON.stringify(path)}${didYouMean(child, children)}; ${valid}`;
  }
  return undefined;
}

/**
 * A NATS subject template: valid placeholders, and literal text that makes valid subjects (tokens
 * separated by single dots, no spaces or wildcards); `{{diff}}` spans lines and cannot be used.
 */
export function subjectTemplateProblem(template: string): string | undefined {
  const placeholders = templateProblem(template);
  if (placeholders !== undefined) return placeholders;
  // Check the literal text: render with a placeholder value that is a valid token.
  const literal = template.replace(/\{\{[^{}]*\}\}/g, 'x');
  if (/[\s*>]/.test(literal)) return 'a subject may not contain spaces or the wildcards * and >';
  if (literal.split('.').some((token) => token === ''))
    return 'a subject is tokens separated by single dots: no empty token, no leading or trailing dot';
  if (template.includes('{{diff}}')) return '{{diff}} spans lines and cannot be part of a subject';
  return undefined;
}
