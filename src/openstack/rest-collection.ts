/**
 * One OpenStack resource collection (`/v2.0/ports`, `/v2/lbaas/pools`): create, get, update,
 * delete, list with filters and pagination, and tags. Neutron and Octavia share this code because
 * their collections follow the same conventions: bodies wrapped in the singular key, lists in the
 * plural key, next pages in `{plural}_links`.
 *
 * Guarantees:
 * - `delete` resolves `'already-gone'` on 404: deleting what is not there is done, not an error
 *   (a retried DELETE whose first attempt succeeded lands here too).
 * - `list` follows every `next` link until the end; each page is asked with the caller's filters.
 * - `create` with tags on a collection tagged by PUT (Neutron except ports) is two calls; when the
 *   tagging fails, the new resource is deleted (best effort) and the tagging error is thrown, so a
 *   resource is never left untagged where tag filters would miss it.
 */
import { isNotFound } from '../errors/classify.js';
import type { ServiceType } from './auth-session.js';
import { OpenStackError, type ResourceRef } from '../errors/openstack-error.js';
import type { QueryParams, QueryValue, ServiceTransport } from './openstack-transport.js';

export interface CollectionSpec {
  service: ServiceType;
  /** Collection path: `/v2.0/networks`, `/v2/lbaas/pools/ID/members`. */
  path: string;
  /** Body wrapper of one resource: `network`. */
  singular: string;
  /** Body wrapper of a list: `networks`. */
  plural: string;
  /** How tags are set on create: in the create body, or by `PUT .../tags` afterwards. */
  tags: 'body' | 'put';
}

/** What a resource has at least. */
export interface Identified {
  id: string;
  name?: string;
}

/** How a delete ended: removed now, or not there to begin with (404). */
export type DeleteOutcome = 'deleted' | 'already-gone';

/**
 * List filters: any attribute filter of the API, plus the tag filters. Tag filters take a list,
 * sent comma-joined (`tags=a,b`: all of them; `tags-any=a,b`: at least one).
 */
export interface Filters {
  tags?: readonly string[];
  'tags-any'?: readonly string[];
  'not-tags'?: readonly string[];
  'not-tags-any'?: readonly string[];
  [attribute: string]: QueryValue;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface ListOptions extends CallOptions {
  /** Page size (`limit`); the server's default when absent. Every page is fetched either way. */
  pageSize?: number;
}

const TAG_FILTERS = new Set(['tags', 'tags-any', 'not-tags', 'not-tags-any']);

/**
 * @example
 * const networks = new RestCollection<Network, NetworkCreate, NetworkUpdate>(transport, spec);
 * const net = await networks.create({ name: 'raven-web', tags: ['raven'] });
 * const mine = await networks.list({ tags: ['raven'] });
 */
export class RestCollection<T extends Identified, C extends object, U extends object> {
  readonly #transport: ServiceTransport;
  readonly #spec: CollectionSpec;

  constructor(transport: ServiceTransport, spec: CollectionSpec) {
    this.#transport = transport;
    this.#spec = spec;
  }

  /** Whether tags go in the create body: a created resource is never seen untagged. */
  get tagsOnCreate(): boolean {
    return this.#spec.tags === 'body';
  }

  /** Create one resource; `tags` are applied the way the collection supports. */
  async create(input: C & { tags?: readonly string[] }, options: CallOptions = {}): Promise<T> {
    const { tags, ...rest } = input;
    const inBody = this.#spec.tags === 'body' && tags !== undefined;
    const answer = await this.#transport.request({
      service: this.#spec.service,
      method: 'POST',
      path: this.#spec.path,
      body: { [this.#spec.singular]: inBody ? { ...rest, tags } : rest },
      resource: this.#ref(undefined, (rest as { name?: unknown }).name),
      createKey: this.#spec.singular,
      ...signalOf(options),
    });
    const created = this.#unwrap(answer.body, this.#spec.singular, 'POST', this.#spec.path) as T;
    if (this.#spec.tags !== 'put' || tags === undefined) return created;
    try {
      const set = await this.setTags(created.id, tags, options);
      return { ...created, tags: set };
    } catch (err) {
      await this.delete(created.id).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Create several resources in one call (Neutron's bulk create: `POST` with the plural wrapper
   * and a list). All or nothing: Neutron creates every one or none. Only for collections that
   * take tags in the body (a tag call per resource would undo the saving).
   *
   * @example
   * const [a, b] = await neutron.ports.createMany([{ network_id: net }, { network_id: net }]);
   */
  async createMany(
    inputs: readonly (C & { tags?: readonly string[] })[],
    options: CallOptions = {},
  ): Promise<T[]> {
    if (this.#spec.tags !== 'body')
      throw new TypeError(`${this.#spec.plural} take tags by a call of their own: create them one by one`);
    const answer = await this.#transport.request({
      service: this.#spec.service,
      method: 'POST',
      path: this.#spec.path,
      body: { [this.#spec.plural]: inputs },
      resource: { type: this.#spec.singular },
      createKey: this.#spec.plural,
      ...signalOf(options),
    });
    const created = (answer.body as Record<string, unknown> | undefined)?.[this.#spec.plural];
    if (Array.isArray(created) && created.length === inputs.length) return created as T[];
    throw new OpenStackError({
      service: this.#spec.service,
      call: `POST ${this.#spec.path}`,
      resource: { type: this.#spec.singular },
      status: 200,
      fault: {
        type: 'UnexpectedAnswer',
        message: `the answer has no "${this.#spec.plural}" of ${inputs.length}`,
      },
    });
  }

  async get(id: string, options: CallOptions = {}): Promise<T> {
    const path = this.#item(id);
    const answer = await this.#transport.request({
      service: this.#spec.service,
      method: 'GET',
      path,
      resource: this.#ref(id),
      ...signalOf(options),
    });
    return this.#unwrap(answer.body, this.#spec.singular, 'GET', path) as T;
  }

  /** Change attributes (`PUT` with the singular wrapper); returns the resource as updated. */
  async update(id: string, changes: U, options: CallOptions = {}): Promise<T> {
    const path = this.#item(id);
    const answer = await this.#transport.request({
      service: this.#spec.service,
      method: 'PUT',
      path,
      body: { [this.#spec.singular]: changes },
      resource: this.#ref(id),
      ...signalOf(options),
    });
    return this.#unwrap(answer.body, this.#spec.singular, 'PUT', path) as T;
  }

  /** Delete; a 404 resolves `'already-gone'`. */
  async delete(id: string, options: CallOptions & { query?: QueryParams } = {}): Promise<DeleteOutcome> {
    try {
      await this.#transport.request({
        service: this.#spec.service,
        method: 'DELETE',
        path: this.#item(id),
        resource: this.#ref(id),
        ...(options.query === undefined ? {} : { query: options.query }),
        ...signalOf(options),
      });
      return 'deleted';
    } catch (err) {
      if (isNotFound(err)) return 'already-gone';
      throw err;
    }
  }

  /** Every resource matching `filters`, following next links. */
  async list(filters: Filters = {}, options: ListOptions = {}): Promise<T[]> {
    const all: T[] = [];
    for await (const page of this.pages(filters, options)) all.push(...page);
    return all;
  }

  /** The matching resources page by page (`limit`/`marker`), as the server links them. */
  async *pages(filters: Filters = {}, options: ListOptions = {}): AsyncGenerator<T[]> {
    let query: Record<string, QueryValue> = toQuery(filters);
    if (options.pageSize !== undefined) query.limit = options.pageSize;
    const seen = new Set<string>();
    for (;;) {
      const answer = await this.#transport.request({
        service: this.#spec.service,
        method: 'GET',
        path: this.#spec.path,
        query,
        resource: { type: this.#spec.singular },
        ...signalOf(options),
      });
      const items = this.#unwrap(answer.body, this.#spec.plural, 'GET', this.#spec.path) as T[];
      if (items.length === 0) return;
      yield items;
      const next = nextQuery(answer.body, `${this.#spec.plural}_links`);
      // A server that links back to a page already read would loop forever: stop instead.
      if (next === undefined || seen.has(JSON.stringify(next))) return;
      seen.add(JSON.stringify(next));
      query = next;
    }
  }

  /** Replace the tags with `tags` (`PUT .../tags` with the full list); returns the tags set. */
  async setTags(id: string, tags: readonly string[], options: CallOptions = {}): Promise<string[]> {
    const answer = await this.#transport.request({
      service: this.#spec.service,
      method: 'PUT',
      path: `${this.#item(id)}/tags`,
      body: { tags },
      resource: this.#ref(id),
      ...signalOf(options),
    });
    const set = (answer.body as { tags?: unknown } | undefined)?.tags;
    return Array.isArray(set) ? set.map(String) : [...tags];
  }

  #item(id: string): string {
    return `${this.#spec.path}/${encodeURIComponent(id)}`;
  }

  #ref(id?: string, name?: unknown): ResourceRef {
    return {
      type: this.#spec.singular,
      ...(id === undefined ? {} : { id }),
      ...(typeof name === 'string' ? { name } : {}),
    };
  }

  #unwrap(body: unknown, key: string, method: string, path: string): object {
    const value = (body as Record<string, unknown> | undefined)?.[key];
    if (typeof value === 'object' && value !== null) return value;
    throw new OpenStackError({
      service: this.#spec.service,
      call: `${method} ${path}`,
      resource: { type: this.#spec.singular },
      status: 200,
      fault: { type: 'UnexpectedAnswer', message: `the answer has no "${key}"` },
    });
  }
}

function signalOf(options: CallOptions): { signal?: AbortSignal } {
  return options.signal === undefined ? {} : { signal: options.signal };
}

function toQuery(filters: Filters): Record<string, QueryValue> {
  const query: Record<string, QueryValue> = {};
  for (const [key, value] of Object.entries(filters)) {
    query[key] = TAG_FILTERS.has(key) && Array.isArray(value) ? value.join(',') : value;
  }
  return query;
}

/** The query of the `next` link, or undefined on the last page. */
function nextQuery(body: unknown, linksKey: string): Record<string, QueryValue> | undefined {
  const links = (body as Record<string, unknown> | undefined)?.[linksKey];
  if (!Array.isArray(links)) return undefined;
  const next = (links as { rel?: unknown; href?: unknown }[]).find((l) => l.rel === 'next');
  if (typeof next?.href !== 'string') return undefined;
  // Only the query is taken: the href's host and path prefix are the server's view (behind a
  // proxy they may not be reachable), the collection path is ours.
  const query: Record<string, string[]> = {};
  for (const [key, value] of new URL(next.href, 'http://link.invalid').searchParams) {
    (query[key] ??= []).push(value);
  }
  return Object.fromEntries(Object.entries(query).map(([k, v]) => [k, v.length === 1 ? v[0] : v]));
}
