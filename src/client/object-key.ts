/**
 * Object keys: the one way Raven names a Kubernetes object, from the watcher up to the cache, the
 * work queue, checkpoints and sinks. A key is `namespace/name` for a namespaced object and `name`
 * for a cluster-scoped one. Object names and namespaces never contain `/`, so a key always parses
 * back into the parts it was made of. It sits in the client layer, the lowest that knows objects,
 * so every layer above uses this one.
 */
import { RavenError } from '../errors/raven-error.js';

declare const objectKeyBrand: unique symbol;

/** A `namespace/name` (or `name`) string that was built or checked by this module. */
export type ObjectKey = string & { readonly [objectKeyBrand]: true };

/** The part of an object a key is made from; cached (read-only) objects fit too. */
export interface KeyedObject {
  readonly metadata?: { readonly name?: string; readonly namespace?: string } | undefined;
}

/** The two halves of a key; `namespace` is undefined for cluster-scoped objects. */
export interface ObjectKeyParts {
  namespace: string | undefined;
  name: string;
}

/**
 * The key of an object, from its `metadata.namespace` and `metadata.name`.
 *
 * @throws RavenError `ERR_INVALID_OBJECT_KEY` when the object has no name.
 * @example
 * objectKey({ metadata: { namespace: 'default', name: 'web-0' } }); // 'default/web-0'
 * objectKey({ metadata: { name: 'node-a' } }); // 'node-a'
 */
export function objectKey(obj: KeyedObject): ObjectKey {
  const name = obj.metadata?.name;
  if (name === undefined || name === '') {
    throw new RavenError(
      'ERR_INVALID_OBJECT_KEY',
      'cannot key an object without metadata.name; every stored object needs a name (generateName alone is not enough)',
    );
  }
  return makeObjectKey(name, obj.metadata?.namespace);
}

/**
 * The key of whatever metadata there is, unchecked: for hot paths that read objects the apiserver
 * sent (its names are valid) and must not stop on one that is not (a nameless object keys as its
 * namespace's `namespace/`, or `''`).
 *
 * @example
 * metadataKey({ namespace: 'default', name: 'web-0' }); // 'default/web-0'
 */
export function metadataKey(
  meta: { readonly namespace?: string | undefined; readonly name?: string | undefined } | undefined,
): ObjectKey {
  return joinKey(meta?.name ?? '', meta?.namespace);
}

/**
 * Build a key from its parts; an empty or undefined namespace makes a cluster-scoped key.
 *
 * @example
 * makeObjectKey('web-0', 'default'); // 'default/web-0'
 */
export function makeObjectKey(name: string, namespace?: string): ObjectKey {
  if (name === '' || name.includes('/')) {
    throw new RavenError(
      'ERR_INVALID_OBJECT_KEY',
      `invalid object name ${JSON.stringify(name)}: must be non-empty and contain no "/"`,
    );
  }
  if (namespace !== undefined && namespace.includes('/')) {
    throw new RavenError(
      'ERR_INVALID_OBJECT_KEY',
      `invalid namespace ${JSON.stringify(namespace)}: must contain no "/"`,
    );
  }
  return joinKey(name, namespace);
}

function joinKey(name: string, namespace: string | undefined): ObjectKey {
  return (namespace === undefined || namespace === '' ? name : `${namespace}/${name}`) as ObjectKey;
}

/**
 * Split a key into namespace and name, checking its shape.
 *
 * @throws RavenError `ERR_INVALID_OBJECT_KEY` for anything but `name` or `namespace/name`.
 * @example
 * parseObjectKey('default/web-0'); // { namespace: 'default', name: 'web-0' }
 */
export function parseObjectKey(key: string): ObjectKeyParts {
  const parts = key.split('/');
  if (parts.length === 1 && parts[0] !== '') return { namespace: undefined, name: key };
  const [namespace, name] = parts;
  if (
    parts.length === 2 &&
    namespace !== undefined &&
    namespace !== '' &&
    name !== undefined &&
    name !== ''
  ) {
    return { namespace, name };
  }
  throw new RavenError(
    'ERR_INVALID_OBJECT_KEY',
    `invalid object key ${JSON.stringify(key)}: expected "name" or "namespace/name"`,
  );
}

/**
 * Check a string's shape and brand it as a key (for keys read back from a queue or a file).
 *
 * @example
 * const key = toObjectKey('kube-system/coredns');
 */
export function toObjectKey(key: string): ObjectKey {
  parseObjectKey(key);
  return key as ObjectKey;
}

/**
 * Whether two uids are of one incarnation of an object: equal, or one of them not known. An
 * object is its uid; a name deleted and made again is another object under the same key.
 *
 * @example
 * sameIncarnation('u1', 'u1'); // => true
 * sameIncarnation('u1', 'u2'); // => false
 */
export function sameIncarnation(a: string | undefined, b: string | undefined): boolean {
  return a === undefined || b === undefined || a === b;
}
