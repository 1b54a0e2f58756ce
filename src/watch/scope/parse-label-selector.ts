/**
 * Parses the label selector string syntax the apiserver accepts:
 *
 *   key=value  key==value  key!=value  key in (a,b)  key notin (a,b)  key  !key
 *
 * joined by commas, with whitespace allowed between tokens. Keys and values are validated as the
 * apiserver validates them. Set-based `>`/`<` (integer comparison) are rejected with an
 * explanation rather than half-supported. Errors are {@link SelectorError}s quoting the selector.
 */
import { labelKeyProblem, labelValueProblem } from './label-syntax.js';
import { LabelSelector, type LabelOperator, type LabelRequirement } from './label-selector.js';
import { SelectorError } from './selector-error.js';

interface Token {
  /** An identifier's text, or the symbol itself: `!`, `=`, `==`, `!=`, `(`, `)`, `,`, `<`, `>`. */
  text: string;
  identifier: boolean;
  position: number;
}

const SYMBOL_CHARS = '!=(),<>';

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input.charAt(i);
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (SYMBOL_CHARS.includes(c)) {
      const two = input.slice(i, i + 2);
      const text = two === '==' || two === '!=' ? two : c;
      tokens.push({ text, identifier: false, position: i });
      i += text.length;
      continue;
    }
    const start = i;
    while (i < input.length && !SYMBOL_CHARS.includes(input.charAt(i)) && !/\s/.test(input.charAt(i))) i++;
    tokens.push({ text: input.slice(start, i), identifier: true, position: start });
  }
  return tokens;
}

/**
 * Parse and validate a label selector; '' (or only whitespace) selects everything.
 *
 * @example
 * parseLabelSelector('app=web,tier notin (cache)').matches({ app: 'web' }); // => true
 * parseLabelSelector('app in (web'); // throws: ... at position 11: expected ',' or ')' after a value
 */
export function parseLabelSelector(input: string): LabelSelector {
  const tokens = tokenize(input);
  let next = 0;
  // Past the last token, `peek` answers an empty end token positioned just after the input.
  const peek = (): Token => tokens[next] ?? { text: '', identifier: false, position: input.length };
  const atEnd = (): boolean => next >= tokens.length;
  const take = (): Token => {
    const token = peek();
    next++;
    return token;
  };
  const fail = (token: Token, problem: string): never => {
    throw new SelectorError('label', input, token.position, problem);
  };
  const describe = (token: Token): string => (token.text === '' ? 'the end' : `'${token.text}'`);

  const key = (): string => {
    const token = take();
    if (!token.identifier) fail(token, `expected a label key, found ${describe(token)}`);
    const problem = labelKeyProblem(token.text);
    if (problem !== undefined) fail(token, problem);
    return token.text;
  };
  const value = (): string => {
    const token = peek();
    if (!token.identifier) return ''; // `key=` followed by ',' or the end: the empty value
    next++;
    const problem = labelValueProblem(token.text);
    if (problem !== undefined) fail(token, problem);
    return token.text;
  };
  const valueSet = (): string[] => {
    const open = take();
    if (open.text !== '(') fail(open, `expected '(' to open the value list, found ${describe(open)}`);
    const values: string[] = [];
    for (;;) {
      values.push(value());
      const token = take();
      if (token.text === ')') return values;
      if (token.text !== ',') fail(token, `expected ',' or ')' after a value, found ${describe(token)}`);
    }
  };

  const requirement = (): LabelRequirement => {
    if (peek().text === '!') {
      next++;
      return { key: key(), operator: 'DoesNotExist', values: [] };
    }
    const k = key();
    if (atEnd() || peek().text === ',') return { key: k, operator: 'Exists', values: [] };
    const op = take();
    const simple: Record<string, LabelOperator> = { '=': 'Equals', '==': 'Equals', '!=': 'NotEquals' };
    const simpleOp = simple[op.text];
    if (simpleOp !== undefined) return { key: k, operator: simpleOp, values: [value()] };
    if (op.identifier && op.text === 'in') return { key: k, operator: 'In', values: valueSet() };
    if (op.identifier && op.text === 'notin') return { key: k, operator: 'NotIn', values: valueSet() };
    if (op.text === '<' || op.text === '>') {
      return fail(op, `'${op.text}' is not supported; use =, ==, !=, in, notin, key or !key`);
    }
    return fail(op, `expected =, ==, !=, in, notin, ',' or the end after key '${k}', found ${describe(op)}`);
  };

  const requirements: LabelRequirement[] = [];
  if (tokens.length === 0) return new LabelSelector(requirements);
  for (;;) {
    requirements.push(requirement());
    if (atEnd()) return new LabelSelector(requirements);
    const token = take();
    if (token.text !== ',') fail(token, `expected ',' between requirements, found ${describe(token)}`);
  }
}
