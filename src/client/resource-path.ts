/**
 * REST paths for any resource: `/api/v1` for the core group, `/apis/<group>/<version>` otherwise,
 * `/namespaces/<ns>` for namespaced resources, then the plural, the name and the subresource.
 * Names and namespaces are percent-encoded.
 */
import { RavenError } from '../errors/raven-error.js';

/** The part of a discovered resource that paths need. */
export interface ResourceRef {
  group: string;
  version: string;
  resource: string;
  namespaced: boolean;
}

export interface PathOptions {
  /** Ignored for cluster-scoped resources; omitted means all namespaces. */
  namespace?: string;
  name?: string;
  subresource?: string;
}

/**
 * Build the path of a collection, an object or a subresource.
 *
 * @example
 * resourcePath(deployments, { namespace: 'web', name: 'api', subresource: 'scale' })
 * // '/apis/apps/v1/namespaces/web/deployments/api/scale'
 */
export function resourcePath(ref: ResourceRef, opts: PathOptions = {}): string {
  let path = ref.group === '' ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  if (ref.namespaced && opts.namespace !== undefined)
    path += `/namespaces/${encodeURIComponent(opts.namespace)}`;
  path += `/${ref.resource}`;
  if (opts.name !== undefined) {
    if (opts.name === '')
      throw new RavenError('ERR_INVALID_ARGUMENT', `an empty name was given for ${ref.resource}`);
    path += `/${encodeURIComponent(opts.name)}`;
  }
  if (opts.subresource !== undefined) {
    if (opts.name === undefined) {
      throw new RavenError(
        'ERR_INVALID_ARGUMENT',
        `subresource ${opts.subresource} of ${ref.resource} needs an object name`,
      );
    }
    path += `/${opts.subresource}`;
  }
  return path;
}
