/**
 * Validation of label keys and values, as the apiserver validates them, with messages that say
 * what would be valid. Each check answers a problem description, or undefined when valid.
 */

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const MAX_NAME = 63;
const MAX_PREFIX = 253;

const NAME_RULE =
  "1 to 63 characters of a-z, A-Z, 0-9, '-', '_' and '.', starting and ending with a letter or digit";
const PREFIX_RULE =
  "a lowercase DNS subdomain of at most 253 characters (a-z, 0-9, '-' and '.', each part starting and ending with a letter or digit)";

/**
 * What is wrong with a label key (`[prefix/]name`), or undefined when it is valid.
 *
 * @example
 * labelKeyProblem('app.kubernetes.io/name'); // => undefined
 * labelKeyProblem('-app'); // => 'label key "-app" must be 1 to 63 characters of ...'
 */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (slash >= 0) {
    const prefix = key.slice(0, slash);
    if (prefix.length === 0 || prefix.length > MAX_PREFIX || !DNS_SUBDOMAIN.test(prefix)) {
      return `label key ${JSON.stringify(key)} has prefix ${JSON.stringify(prefix)}, which must be ${PREFIX_RULE}`;
    }
    if (name.length === 0 || name.length > MAX_NAME || !NAME.test(name)) {
      return `label key ${JSON.stringify(key)} has name ${JSON.stringify(name)}, which must be ${NAME_RULE}`;
    }
    return undefined;
  }
  if (name.length === 0 || name.length > MAX_NAME || !NAME.test(name)) {
    return `label key ${JSON.stringify(key)} must be ${NAME_RULE}, optionally preceded by a DNS subdomain prefix and '/'`;
  }
  return undefined;
}

/** What is wrong with a label value, or undefined when it is valid (the empty value is valid). */
export function labelValueProblem(value: string): string | undefined {
  if (value === '' || (value.length <= MAX_NAME && NAME.test(value))) return undefined;
  return `label value ${JSON.stringify(value)} must be empty or ${NAME_RULE}`;
}
