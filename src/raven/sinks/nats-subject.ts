/**
 * NATS subjects from a change: the sink's `subject` template (`template.ts`, the same
 * `{{placeholders}}` as chat messages) with every substituted value made one subject token.
 * NATS subjects are dot-separated tokens without spaces or wildcards, so in a value each `.`,
 * `*`, `>` and whitespace becomes `_`, and an empty value (a cluster-scoped object's namespace)
 * becomes `_`: `raven.{{resource.kind}}.{{namespace}}` gives `raven.Deployment.default` and
 * `raven.Namespace._`. The template's own text is checked when the config is loaded and when the
 * sink is built (`subjectTemplateProblem` in config/template-check.ts).
 */
import type { ChangeEvent } from '../model/change-event.js';
import type { SinkRecord } from '../model/gap-notice.js';
import { renderTemplate } from '../model/template.js';

const UNSAFE = /[\s.*>]/g;

/** One subject token from a substituted value. */
export function subjectToken(value: string): string {
  return value === '' ? '_' : value.replace(UNSAFE, '_');
}

/**
 * @example
 * natsSubject('raven.prod.{{resource.kind}}.{{namespace}}', event); // => 'raven.prod.Deployment.default'
 */
export function natsSubject(template: string, record: SinkRecord): string {
  // A gap notice has the watcher, resource and (sometimes) namespace a template names; the rest render empty.
  return renderTemplate(template, record as ChangeEvent, { escape: subjectToken });
}

/** The subjects a stream Raven creates captures: the template's literal start, then `>`. */
export function streamSubjects(template: string): string[] {
  const open = template.indexOf('{{');
  if (open < 0) return [template];
  const prefix = template.slice(0, open);
  const lastDot = prefix.lastIndexOf('.');
  return [lastDot < 0 ? '>' : `${prefix.slice(0, lastDot)}.>`];
}
