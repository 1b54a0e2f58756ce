/**
 * Ordering resourceVersions. Kubernetes calls them opaque, and the watch engine only compares them
 * for equality. The daemon needs an order to resume where every sink confirmed and to skip what a
 * sink already has, and it relies on what every etcd-backed apiserver does: a resourceVersion is
 * the etcd revision of the write, a decimal integer that grows across the whole resource (across
 * namespaces too). Anything else (an aggregated API with its own scheme) has no order: the callers
 * then deliver rather than skip, and do not resume.
 */

const REVISION = /^\d+$/;

/**
 * -1, 0 or 1 as `a` is older than, the same as or newer than `b`; undefined when they cannot be
 * ordered (missing, or not etcd revisions and not equal).
 *
 * @example
 * compareResourceVersions('99', '100'); // => -1
 * compareResourceVersions('abc', 'abc'); // => 0
 * compareResourceVersions('abc', '7'); // => undefined
 */
export function compareResourceVersions(
  a: string | undefined,
  b: string | undefined,
): -1 | 0 | 1 | undefined {
  if (a === undefined || b === undefined || a === '' || b === '') return undefined;
  if (a === b) return 0;
  if (!REVISION.test(a) || !REVISION.test(b)) return undefined;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
