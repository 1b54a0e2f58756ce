/**
 * Endpoint selection from a Keystone v3 service catalog: the first endpoint of the wanted service
 * type with the wanted interface, in the wanted region when one is configured. A miss is a
 * {@link ConfigError} listing what the catalog does offer, so the fix is obvious.
 */
import { ConfigError } from '../errors/raven-error.js';

/** One entry of `token.catalog`, as the token schema decodes it (undefined: not in the answer). */
export interface CatalogService {
  type: string;
  name?: string | undefined;
  endpoints: CatalogEndpoint[];
}

export interface CatalogEndpoint {
  url: string;
  interface: string;
  region?: string | null | undefined;
  region_id?: string | null | undefined;
}

export interface EndpointFilter {
  interface: string;
  region?: string;
}

/**
 * The URL of `serviceType` (`network`, `load-balancer`) in `catalog`, without a trailing slash.
 *
 * @example
 * selectEndpoint(token.catalog, 'network', { interface: 'public', region: 'RegionOne' });
 */
export function selectEndpoint(
  catalog: readonly CatalogService[],
  serviceType: string,
  filter: EndpointFilter,
): string {
  const services = catalog.filter((service) => service.type === serviceType);
  const candidates = services.flatMap((service) => service.endpoints);
  const match = candidates.find(
    (endpoint) =>
      endpoint.interface === filter.interface &&
      (filter.region === undefined ||
        endpoint.region_id === filter.region ||
        endpoint.region === filter.region),
  );
  if (match !== undefined) return normaliseEndpoint(match.url);
  const offered = candidates.map((e) => `${e.interface}/${e.region_id ?? e.region ?? 'no region'}`);
  const wanted = `interface '${filter.interface}'${filter.region === undefined ? '' : ` in region '${filter.region}'`}`;
  const path = filter.region === undefined ? 'interface' : 'region';
  throw new ConfigError(
    services.length === 0
      ? `the service catalog has no '${serviceType}' service (it has: ${catalog.map((s) => s.type).join(', ') || 'nothing'})`
      : `the service catalog has no '${serviceType}' endpoint with ${wanted} (it has: ${offered.join(', ')})`,
    { path },
  );
}

/**
 * Strip a trailing slash and a trailing API version (`/v2.0`, `/v2`): the clients add the version
 * to every path themselves, and catalogs differ in whether they include it.
 */
export function normaliseEndpoint(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/v2(\.0)?$/, '');
}
