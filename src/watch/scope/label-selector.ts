/**
 * A label selector: requirements that must all hold for an object's labels. Used both as the
 * `labelSelector` query parameter (in normalised form) and for client-side matching, which agrees
 * with the apiserver: `!=` and `notin` also match objects that lack the label.
 *
 * Build one with `parseLabelSelector` (the string syntax) or {@link labelSelectorFromObject} (the
 * `{ matchLabels, matchExpressions }` object of workload specs).
 */
import type { LabelSelector as LabelSelectorObject } from 'kubernetes-types/meta/v1.js';
import { labelKeyProblem, labelValueProblem } from './label-syntax.js';
import { ConfigError } from '../../errors/raven-error.js';

/** The operators of a requirement; `Equals`/`NotEquals` are `=`/`!=` (and `==`). */
export type LabelOperator = 'Exists' | 'DoesNotExist' | 'Equals' | 'NotEquals' | 'In' | 'NotIn';

/** One requirement on one label key. `values` is empty for Exists/DoesNotExist, one for (Not)Equals. */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

/** Labels as found on an object; missing labels match nothing but `!key`, `!=` and `notin`. */
export type Labels = Readonly<Record<string, string>> | undefined;

/**
 * Validated requirements, a matcher, and the normalised string form.
 *
 * @example
 * const selector = parseLabelSelector('tier in (front, back), !legacy, app=web');
 * selector.matches({ app: 'web', tier: 'front' }); // => true
 * selector.toString(); // => 'app=web,!legacy,tier in (back,front)'
 */
export class LabelSelector {
  /** Requirements sorted by key, values sorted: the normalised order. */
  readonly requirements: readonly LabelRequirement[];

  constructor(requirements: readonly LabelRequirement[]) {
    this.requirements = requirements
      .map((r) => ({ ...r, values: [...new Set(r.values)].sort() }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** True when there are no requirements: everything matches. */
  get isEmpty(): boolean {
    return this.requirements.length === 0;
  }

  /** Whether labels satisfy every requirement. */
  matches(labels: Labels): boolean {
    return this.requirements.every((requirement) => requirementMatches(requirement, labels));
  }

  /** The normalised form, for the `labelSelector` query parameter; '' when empty. */
  toString(): string {
    return this.requirements.map(formatRequirement).join(',');
  }
}

function requirementMatches({ key, operator, values }: LabelRequirement, labels: Labels): boolean {
  const has = labels !== undefined && Object.hasOwn(labels, key);
  const value = has ? labels[key] : undefined;
  switch (operator) {
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Equals':
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotEquals':
    case 'NotIn':
      return value === undefined || !values.includes(value);
  }
}

function formatRequirement({ key, operator, values }: LabelRequirement): string {
  switch (operator) {
    case 'Exists':
      return key;
    case 'DoesNotExist':
      return `!${key}`;
    case 'Equals':
      return `${key}=${values[0] ?? ''}`;
    case 'NotEquals':
      return `${key}!=${values[0] ?? ''}`;
    case 'In':
      return `${key} in (${values.join(',')})`;
    case 'NotIn':
      return `${key} notin (${values.join(',')})`;
  }
}

const objectOperators: Record<string, LabelOperator | undefined> = {
  In: 'In',
  NotIn: 'NotIn',
  Exists: 'Exists',
  DoesNotExist: 'DoesNotExist',
};

/**
 * A selector from its object form. Keys and values are validated; an unknown operator, values
 * given to Exists/DoesNotExist, or an In/NotIn without values throw a {@link ConfigError} whose
 * path names the offending member (`matchExpressions[1].operator`).
 *
 * @example
 * labelSelectorFromObject({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['front'] }] });
 */
export function labelSelectorFromObject(object: LabelSelectorObject): LabelSelector {
  const requirements: LabelRequirement[] = [];
  const check = (problem: string | undefined, path: string): void => {
    if (problem !== undefined) throw new ConfigError(problem, { path });
  };
  for (const [key, value] of Object.entries(object.matchLabels ?? {})) {
    check(labelKeyProblem(key) ?? labelValueProblem(value), `matchLabels.${key}`);
    requirements.push({ key, operator: 'Equals', values: [value] });
  }
  for (const [index, expression] of (object.matchExpressions ?? []).entries()) {
    const path = `matchExpressions[${index}]`;
    const operator = objectOperators[expression.operator];
    const given = JSON.stringify(expression.operator);
    check(
      operator === undefined
        ? `unknown operator ${given} (valid: In, NotIn, Exists, DoesNotExist)`
        : undefined,
      `${path}.operator`,
    );
    check(labelKeyProblem(expression.key), `${path}.key`);
    const values = expression.values ?? [];
    const existence = operator === 'Exists' || operator === 'DoesNotExist';
    if (existence && values.length > 0) check(`${expression.operator} takes no values`, `${path}.values`);
    if (!existence && values.length === 0)
      check(`${expression.operator} needs at least one value`, `${path}.values`);
    for (const [i, value] of values.entries()) check(labelValueProblem(value), `${path}.values[${i}]`);
    requirements.push({ key: expression.key, operator: operator ?? 'Exists', values });
  }
  return new LabelSelector(requirements);
}
