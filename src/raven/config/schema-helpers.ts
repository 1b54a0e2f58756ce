/**
 * Building blocks of the config schema. Two conventions make every error actionable:
 *
 * - {@link expecting} attaches "what would be valid" to a schema ("an integer from 0 to 65535");
 *   the loader's issue formatter turns it into "expected ..., got ...".
 * - {@link strictObject} rejects unknown keys and remembers the valid ones, so each unknown key is
 *   reported at its own path with a "did you mean" suggestion.
 */
import * as z from 'zod';

const expectations = new WeakMap<object, string>();

/** Record what a valid value looks like, for error messages. Returns the schema itself. */
export function expecting<T extends z.ZodType>(schema: T, text: string): T {
  expectations.set(schema, text);
  return schema;
}

/** The text recorded with {@link expecting}, if any. */
export function expectationOf(schema: object | undefined): string | undefined {
  return schema === undefined ? undefined : expectations.get(schema);
}

const knownKeys = new WeakMap<object, readonly string[]>();

/** The keys a {@link strictObject} schema accepts. */
export function knownKeysOf(schema: object | undefined): readonly string[] | undefined {
  return schema === undefined ? undefined : knownKeys.get(schema);
}

/**
 * An object schema whose unknown keys are errors. The loader reports each unknown key at its own
 * path with a "did you mean" from {@link knownKeysOf}; zod reports them alongside any other
 * problem of the same object, so one pass shows everything.
 */
export function strictObject<Shape extends z.ZodRawShape>(shape: Shape) {
  const schema = expecting(z.strictObject(shape), 'a mapping of settings');
  knownKeys.set(schema, Object.keys(shape));
  return schema;
}

/** A value written either as one item or as a list; parsed to a list. */
export function oneOrMany<T extends z.ZodType>(item: T, text: string) {
  return expecting(z.union([item, z.array(item)]), text).transform((value): z.output<T>[] =>
    Array.isArray(value) ? (value as z.output<T>[]) : [value as z.output<T>],
  );
}

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Names of watchers, sinks and handlers: they appear in logs, metrics and checkpoint keys. */
export const nameSchema = expecting(
  z.string().max(63).regex(NAME),
  "a name of 1 to 63 characters a-z, 0-9 and '-', starting and ending with a letter or digit",
);

/** A non-empty string. */
export function text(description: string) {
  return expecting(z.string().trim().min(1), description);
}

/** An http(s) URL with a host. */
export const urlSchema = expecting(
  z.url({ protocol: /^https?$/, hostname: /./ }),
  'a URL like https://host/path',
);

/** A number of seconds greater than zero. */
export function seconds(defaultValue: number) {
  return expecting(z.number().positive(), 'a number of seconds greater than 0').default(defaultValue);
}

/** An integer of at least `min`. */
export function integer(min: number, defaultValue: number, unit = '') {
  return expecting(z.int().min(min), `an integer of at least ${min}${unit}`).default(defaultValue);
}

const HOSTNAME = /^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*$/;

/** An IP address or host name to listen on. */
export const listenAddressSchema = expecting(
  z.union([z.ipv4(), z.ipv6(), z.string().regex(HOSTNAME)]),
  'an IP address or host name, such as 127.0.0.1, 0.0.0.0, :: or localhost',
);

/** Header names as HTTP allows them (RFC 9110 tokens). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Headers Raven sets itself on every request; configuring them would corrupt the request. */
function reservedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return ['content-type', 'content-length', 'host'].includes(lower) || lower.startsWith('x-raven-');
}

/** Extra HTTP headers: names are tokens, values strings (quote numbers). */
export const headersSchema = expecting(
  z.record(z.string(), z.string()),
  'a mapping of header names to strings',
)
  .superRefine((headers, ctx) => {
    for (const name of Object.keys(headers)) {
      const problem = !HEADER_NAME.test(name)
        ? `invalid header name ${JSON.stringify(name)}; header names are letters, digits and !#$%&'*+.^_\`|~-`
        : reservedHeader(name)
          ? `header ${JSON.stringify(name)} is set by Raven and cannot be configured (content-type, content-length, host and x-raven-* are reserved)`
          : undefined;
      if (problem !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: problem });
    }
  })
  .default({});

/**
 * A server URI that may hold a password (`postgres://user:secret@host/db`): checked for its
 * scheme, and never shown in an error, like sink URLs.
 */
export function serverUri(schemes: readonly string[], example: string) {
  const pattern = new RegExp(`^(${schemes.join('|')})://.`);
  return expecting(z.string(), `a URI like ${example}`).superRefine((value, ctx) => {
    if (!pattern.test(value))
      ctx.addIssue({
        code: 'custom',
        message: `expected a URI like ${example} (scheme ${schemes.map((s) => `${s}://`).join(' or ')}); the value given is not one (not shown: it may hold a password)`,
      });
  });
}
