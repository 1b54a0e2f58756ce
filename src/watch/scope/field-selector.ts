/**
 * Field selectors: `field=value`, `field==value`, `field!=value`, joined by commas, all of which
 * must hold. A value may contain `\,`, `\=` and `\\`; any other backslash sequence, and an
 * unescaped `,` or `=` inside a value, are errors, as on the apiserver.
 *
 * Client-side matching reads dotted paths of the object (`metadata.name`, `status.phase`,
 * `spec.nodeName`); a missing field reads as the empty string, as on the apiserver, so
 * `spec.nodeName=` selects unscheduled pods. Which fields a resource supports is the apiserver's
 * business; this module only checks the syntax of field names.
 */
import { SelectorError } from './selector-error.js';

/** One term: `field=value` or `field!=value` (`==` is normalised to `=`). */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

const FIELD_PATH = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * Validated field requirements, a matcher and the normalised string form.
 *
 * @example
 * const selector = parseFieldSelector('status.phase!=Succeeded,spec.nodeName=node-1');
 * selector.matches({ spec: { nodeName: 'node-1' }, status: { phase: 'Running' } }); // => true
 */
export class FieldSelector {
  /** Requirements in normalised (sorted) order. */
  readonly requirements: readonly FieldRequirement[];

  constructor(requirements: readonly FieldRequirement[]) {
    this.requirements = [...requirements].sort((a, b) => compare(formatTerm(a), formatTerm(b)));
  }

  get isEmpty(): boolean {
    return this.requirements.length === 0;
  }

  /** Whether an object satisfies every requirement. */
  matches(object: unknown): boolean {
    return this.requirements.every(
      ({ field, operator, value }) => (fieldValue(object, field) === value) === (operator === '='),
    );
  }

  /** Whether some requirement constrains `field`. */
  constrains(field: string): boolean {
    return this.requirements.some((r) => r.field === field);
  }

  /** A selector with `more` requirements added. */
  with(more: readonly FieldRequirement[]): FieldSelector {
    return new FieldSelector([...this.requirements, ...more]);
  }

  /** The normalised form for the `fieldSelector` query parameter; '' when empty. */
  toString(): string {
    return this.requirements.map(formatTerm).join(',');
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function formatTerm({ field, operator, value }: FieldRequirement): string {
  return `${field}${operator}${escapeFieldValue(value)}`;
}

/** The string a field selector compares against: scalars as text, anything missing as ''. */
function fieldValue(object: unknown, path: string): string {
  let current = object;
  for (const part of path.split('.')) {
    if (typeof current !== 'object' || current === null) return '';
    current = (current as Record<string, unknown>)[part];
  }
  if (typeof current === 'string') return current;
  if (typeof current === 'number' || typeof current === 'boolean') return String(current);
  return '';
}

/** Escape `\`, `,` and `=` in a value for the string form. */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/**
 * Parse and validate a field selector; '' selects everything. Empty terms (`a=b,,c=d`) are
 * ignored, as on the apiserver.
 *
 * @example
 * parseFieldSelector('metadata.name=a\\,b').requirements; // => [{ field: 'metadata.name', operator: '=', value: 'a,b' }]
 */
export function parseFieldSelector(input: string): FieldSelector {
  const requirements: FieldRequirement[] = [];
  for (const { text, start } of splitTerms(input)) {
    if (text === '') continue;
    const fail = (offset: number, problem: string): never => {
      throw new SelectorError('field', input, start + offset, problem);
    };
    const split = splitTerm(text);
    if (split === undefined)
      return fail(
        0,
        `term ${JSON.stringify(text)} has no operator; expected field=value, field==value or field!=value`,
      );
    const { field, operator, valueStart } = split;
    if (!FIELD_PATH.test(field)) {
      fail(
        0,
        `field ${JSON.stringify(field)} must be a dotted path of letters, digits, '_' and '-', such as metadata.name or status.phase`,
      );
    }
    const value = unescapeValue(text.slice(valueStart), (offset, problem) =>
      fail(valueStart + offset, problem),
    );
    requirements.push({ field, operator: operator === '!=' ? '!=' : '=', value });
  }
  return new FieldSelector(requirements);
}

/** Terms separated by unescaped commas, with their start positions. */
function splitTerms(input: string): { text: string; start: number }[] {
  const terms: { text: string; start: number }[] = [];
  let start = 0;
  for (let i = 0; i < input.length; i++) {
    const c = input.charAt(i);
    if (c === '\\') i++;
    else if (c === ',') {
      terms.push({ text: input.slice(start, i), start });
      start = i + 1;
    }
  }
  terms.push({ text: input.slice(start), start });
  return terms;
}

/** The field, the first unescaped operator (`!=` before `==` before `=`) and where the value starts. */
function splitTerm(term: string): { field: string; operator: string; valueStart: number } | undefined {
  for (let i = 0; i < term.length; i++) {
    if (term.charAt(i) === '\\') {
      i++;
      continue;
    }
    for (const operator of ['!=', '==', '=']) {
      if (term.startsWith(operator, i))
        return { field: term.slice(0, i), operator, valueStart: i + operator.length };
    }
  }
  return undefined;
}

function unescapeValue(raw: string, fail: (offset: number, problem: string) => never): string {
  let value = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charAt(i);
    if (c === '\\') {
      const escaped = raw.charAt(i + 1);
      if (escaped !== '\\' && escaped !== ',' && escaped !== '=') {
        fail(i, `invalid escape sequence '\\${escaped}' in a value; only \\\\, \\, and \\= are allowed`);
      }
      value += escaped;
      i++;
    } else if (c === '=' || c === ',') {
      fail(i, `unescaped '${c}' in a value; write it as '\\${c}'`);
    } else {
      value += c;
    }
  }
  return value;
}
