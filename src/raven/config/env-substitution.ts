/**
 * Environment variables in config values, so secrets and per-cluster settings stay out of the file:
 *
 * - `${NAME}`: the variable's value; unset is an error naming the variable and the field.
 * - `${NAME:-default}`: the default when the variable is unset or empty. The default is literal text.
 * - `$${...}`: a literal `${...}` (the escape drops one `$`).
 *
 * Only string values are substituted, never keys. The result is a string; where a field expects a
 * number or `true`/`false`, the loader converts a substituted value (see {@link coerceSubstituted}),
 * so `port: ${PORT:-9090}` is a number while a secret of digits stays a string.
 */
import { isMap, isScalar, isSeq, type Document, type Scalar } from 'yaml';
import type { ConfigPath } from '../../errors/config-path.js';

/** Variables as in `process.env`. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** A problem at a path. */
export interface SubstitutionProblem {
  path: ConfigPath;
  message: string;
}

/** What substitution did: the problems, and which fields took values from which variables. */
export interface SubstitutionReport {
  problems: SubstitutionProblem[];
  /** Fields whose value came (partly) from variables; their values are not echoed in errors. */
  substituted: { path: ConfigPath; variables: string[] }[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

type Expanded = { value: string; variables: string[] } | { problems: string[] };

/**
 * Expand the references in one string.
 *
 * @example
 * expandString('Bearer ${TOKEN}', { TOKEN: 't' }); // => { value: 'Bearer t', variables: ['TOKEN'] }
 * expandString('$${TOKEN}', {}); // => { value: '${TOKEN}', variables: [] }
 */
export function expandString(input: string, env: Environment): Expanded {
  let value = '';
  const variables: string[] = [];
  const problems: string[] = [];
  let i = 0;
  while (i < input.length) {
    if (input.startsWith('$${', i)) {
      value += '${';
      i += 3;
      continue;
    }
    if (!input.startsWith('${', i)) {
      value += input.charAt(i);
      i++;
      continue;
    }
    const close = input.indexOf('}', i + 2);
    if (close < 0) {
      problems.push(`unclosed "\${" at position ${i}; write \${NAME}, or $\${ for a literal "\${"`);
      break;
    }
    const body = input.slice(i + 2, close);
    const separator = body.indexOf(':-');
    const name = separator < 0 ? body : body.slice(0, separator);
    if (!NAME.test(name)) {
      problems.push(
        `invalid reference "\${${body}}" at position ${i}; expected \${NAME} or \${NAME:-default} with NAME of letters, digits and '_'`,
      );
    } else {
      const set = env[name];
      if (separator >= 0) {
        value += set === undefined || set === '' ? body.slice(separator + 2) : set;
      } else if (set === undefined) {
        problems.push(
          `environment variable ${name} is not set; set it, or give a default with \${${name}:-value}`,
        );
      } else {
        value += set;
      }
      if (!variables.includes(name)) variables.push(name);
    }
    i = close + 1;
  }
  return problems.length > 0 ? { problems } : { value, variables };
}

const NUMBER = /^[-+]?(\d+|\d*\.\d+)([eE][-+]?\d+)?$/;

/**
 * A substituted string as the type a field expects, or undefined when it does not read as one.
 *
 * @example
 * coerceSubstituted('9090', 'number'); // => 9090
 * coerceSubstituted('yes', 'boolean'); // => undefined
 */
export function coerceSubstituted(
  value: string,
  expected: 'number' | 'boolean',
): number | boolean | undefined {
  const trimmed = value.trim();
  if (expected === 'boolean') return trimmed === 'true' ? true : trimmed === 'false' ? false : undefined;
  return NUMBER.test(trimmed) ? Number(trimmed) : undefined;
}

/**
 * Substitute variables in every string value of a parsed document, in place.
 */
export function substituteEnvironment(doc: Document, env: Environment): SubstitutionReport {
  const report: SubstitutionReport = { problems: [], substituted: [] };
  const visit = (node: unknown, path: ConfigPath): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        visit(pair.value, [...path, String(key)]);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => visit(item, [...path, index]));
    } else if (isScalar(node) && typeof node.value === 'string' && node.value.includes('${')) {
      substituteScalar(node, path, env, report);
    }
  };
  visit(doc.contents, []);
  return report;
}

function substituteScalar(
  node: Scalar,
  path: ConfigPath,
  env: Environment,
  report: SubstitutionReport,
): void {
  const expanded = expandString(String(node.value), env);
  if ('problems' in expanded) {
    for (const message of expanded.problems) report.problems.push({ path, message });
    return;
  }
  if (expanded.variables.length > 0) report.substituted.push({ path, variables: expanded.variables });
  node.value = expanded.value;
}
