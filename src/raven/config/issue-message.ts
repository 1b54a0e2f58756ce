/**
 * Turns schema issues into messages a user can act on: what is wrong, and what would be valid.
 *
 * Two halves, because each knows half the story: {@link expectationMap} runs inside the parse and
 * knows the schema ("an integer from 0 to 65535"); {@link issueMessage} runs afterwards and knows
 * the value the user wrote ("got 70000"), or that it came from a variable and must not be echoed.
 */
import type * as z from 'zod';
import { didYouMean } from '../../util/did-you-mean.js';
import { expectationOf, knownKeysOf } from './schema-helpers.js';
import type { ConfigPath } from '../../errors/config-path.js';

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
  record: 'a mapping',
};

function limit(kind: 'min' | 'max', issue: { origin: string; inclusive?: boolean }, bound: unknown): string {
  const n = Number(bound);
  switch (issue.origin) {
    case 'string':
      return kind === 'min'
        ? n <= 1
          ? 'a non-empty string'
          : `at least ${n} characters`
        : `at most ${n} characters`;
    case 'array':
      return kind === 'min'
        ? `a list of at least ${n} item${n === 1 ? '' : 's'}`
        : `a list of at most ${n} items`;
    default: {
      const strict = issue.inclusive === false;
      return kind === 'min'
        ? `a number ${strict ? 'greater than' : 'of at least'} ${n}`
        : `a number ${strict ? 'less than' : 'of at most'} ${n}`;
    }
  }
}

/**
 * The per-parse error map: each issue's message becomes the expectation, from the schema when it
 * recorded one with `expecting`, else from the issue itself.
 */
export const expectationMap: z.core.$ZodErrorMap = (issue) => {
  // The valid keys travel in the message to `issueProblems`, which reports each unknown key.
  if (issue.code === 'unrecognized_keys')
    return JSON.stringify(knownKeysOf(issue.schema ?? issue.inst) ?? []);
  const recorded = expectationOf(issue.schema) ?? expectationOf(issue.inst);
  if (recorded !== undefined && issue.code !== 'custom') return recorded;
  switch (issue.code) {
    case 'invalid_type':
      return TYPE_NAMES[issue.expected] ?? issue.expected;
    case 'too_small':
      return limit('min', issue, issue.minimum);
    case 'too_big':
      return limit('max', issue, issue.maximum);
    case 'invalid_format':
      return `a ${issue.format}`;
    default:
      return undefined;
  }
};

/** A short, safe description of a value the user wrote. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value;
}

/** What kind of value the user wrote, without the value. */
function describeKind(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return TYPE_NAMES[typeof value] ?? typeof value;
}

/** A problem at a path. */
export interface Problem {
  path: ConfigPath;
  message: string;
}

/**
 * The problems one issue stands for: one per unknown key, else one.
 * `valueAt` answers what the user wrote at a path, `variablesAt` which variables it came from.
 */
export function issueProblems(
  issue: z.core.$ZodIssue,
  valueAt: (path: ConfigPath) => unknown,
  variablesAt: (path: ConfigPath) => readonly string[],
): Problem[] {
  const path = issue.path as ConfigPath;
  if (issue.code !== 'unrecognized_keys') {
    return [{ path, message: issueMessage(issue, valueAt(path), variablesAt(path)) }];
  }
  const known = JSON.parse(issue.message) as string[];
  return issue.keys.map((key) => ({
    path: [...path, key],
    message: `unknown key ${JSON.stringify(key)}${didYouMean(key, known)}; valid keys: ${known.join(', ')}`,
  }));
}

/** Fields whose value is a credential (`token`, `password`, `bearerToken`, ...): never echoed. */
const CREDENTIAL_KEY = /(token|password|secret|apikey)$/i;

/** The final message for one issue; `value` is what the user wrote at the issue's path. */
function issueMessage(issue: z.core.$ZodIssue, value: unknown, variables: readonly string[]): string {
  if (issue.code === 'custom') return issue.message;
  const key = issue.path.at(-1);
  const shown =
    variables.length > 0 && typeof value === 'string'
      ? `the value of ${variables.map((v) => `\${${v}}`).join(', ')} (not shown)`
      : typeof key === 'string' && CREDENTIAL_KEY.test(key) && value !== undefined && value !== null
        ? `${describeKind(value)} (not shown: it is a credential)`
        : describeValue(value);
  const choices =
    issue.code === 'invalid_value'
      ? issue.values.map(String)
      : issue.code === 'invalid_union' && 'options' in issue
        ? issue.options.map(String)
        : undefined;
  if (choices !== undefined) {
    const list = `one of ${choices.join(', ')}`;
    if (value === undefined) return `missing; expected ${list}`;
    const hint = typeof value === 'string' && variables.length === 0 ? didYouMean(value, choices) : '';
    return `expected ${list}, got ${shown}${hint}`;
  }
  if (value === undefined) return `missing; expected ${issue.message}`;
  // URLs of chat and webhook sinks are often credentials: say where, never what.
  if (issue.code === 'invalid_format' && issue.format === 'url') {
    return `expected ${issue.message}; the value given is not one (not shown: URLs may hold credentials)`;
  }
  return `expected ${issue.message}, got ${shown}`;
}
