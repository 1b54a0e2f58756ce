/**
 * Typed-enough REST for any resource: get, list (one page or all pages), create, replace, patch
 * (merge, strategic, JSON patch, server-side apply), delete and deleteCollection, including
 * subresources.
 *
 * Namespaces: for namespaced resources, single-object calls default to the client's namespace;
 * list calls without `namespace` cover all namespaces. Cluster-scoped resources ignore it.
 * Paging: `listAll()` follows `continue` tokens; a token that expires mid-way surfaces as an
 * ApiError (410, see `isExpired`), and the caller decides whether to start over.
 */
import type { DeleteOptions, ListMeta, Preconditions } from 'kubernetes-types/meta/v1.js';
import { RavenError } from '../errors/raven-error.js';
import type { RequestOptions } from './kube-client.js';
import type { Query } from './request-path.js';
import { resourcePath, type ResourceRef } from './resource-path.js';

import type { KubeObject } from './kube-object.js';

export type { KubeObject };

/** A list answer. */
export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: T[];
}

/** The part of a client the REST layer needs. */
export interface ResourceRequester {
  readonly namespace: string;
  request<T>(opts: RequestOptions): Promise<T>;
}

/** What every call of a ResourceClient takes: the namespace (else the client's) and an abort signal. */
export interface ResourceCallOptions {
  namespace?: string;
  signal?: AbortSignal;
}

export interface ListOptions extends ResourceCallOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  timeoutSeconds?: number;
}

export interface WriteOptions extends ResourceCallOptions {
  /** Validate and answer without persisting. */
  dryRun?: boolean;
  fieldManager?: string;
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
  subresource?: string;
}

/** merge: RFC 7386; strategic: Kubernetes strategic merge; json: RFC 6902; apply: server-side apply. */
export type PatchType = 'merge' | 'strategic' | 'json' | 'apply';

export interface PatchOptions extends WriteOptions {
  type: PatchType;
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
}

export interface DeleteObjectOptions extends ResourceCallOptions {
  preconditions?: Preconditions;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  gracePeriodSeconds?: number;
  dryRun?: boolean;
}

const patchContentTypes: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
};

/** Page size of listAll() when none is given: the apiserver's own recommended chunk size. */
const defaultPageSize = 500;

/**
 * REST calls for one resource type.
 *
 * @example
 * const deployments = new ResourceClient(client, await discovery.resolve('deploy'));
 * for await (const d of deployments.listAll({ labelSelector: 'app=web' })) console.log(d.metadata?.name);
 * await deployments.patch('web', { spec: { replicas: 3 } }, { type: 'merge' });
 */
export class ResourceClient<T extends KubeObject = KubeObject> {
  readonly #client: ResourceRequester;
  readonly resource: ResourceRef;

  constructor(client: ResourceRequester, resource: ResourceRef) {
    this.#client = client;
    this.resource = {
      group: resource.group,
      version: resource.version,
      resource: resource.resource,
      namespaced: resource.namespaced,
    };
  }

  get(name: string, opts: ResourceCallOptions & { subresource?: string } = {}): Promise<T> {
    return this.#call('GET', () => this.#objectPath(name, opts), {}, opts);
  }

  /** One page. Without `namespace`, a namespaced resource is listed across all namespaces. */
  list(opts: ListOptions = {}): Promise<KubeList<T>> {
    return this.#call('GET', () => this.#collectionPath(opts.namespace), listQuery(opts), opts);
  }

  /** Every page, following `continue` tokens; `limit` is the page size (default 500). */
  async *pages(opts: ListOptions = {}): AsyncGenerator<KubeList<T>> {
    let page = await this.list({ ...opts, limit: opts.limit ?? defaultPageSize });
    yield page;
    while (page.metadata?.continue !== undefined && page.metadata.continue !== '') {
      // A continue token pins the snapshot; resourceVersion must not be sent with it.
      const { resourceVersion: _rv, resourceVersionMatch: _m, ...rest } = opts;
      page = await this.list({
        ...rest,
        limit: opts.limit ?? defaultPageSize,
        continue: page.metadata.continue,
      });
      yield page;
    }
  }

  /** Every item of every page. */
  async *listAll(opts: ListOptions = {}): AsyncGenerator<T> {
    for await (const page of this.pages(opts)) yield* page.items;
  }

  create(body: T, opts: WriteOptions = {}): Promise<T> {
    const namespace = this.#namespace(opts.namespace ?? body.metadata?.namespace);
    const path = (): string =>
      opts.subresource === undefined
        ? this.#collectionPath(namespace)
        : resourcePath(this.resource, {
            ...optional('namespace', namespace),
            name: body.metadata?.name ?? '',
            subresource: opts.subresource,
          });
    return this.#call('POST', path, writeQuery(opts), opts, { body });
  }

  replace(name: string, body: T, opts: WriteOptions = {}): Promise<T> {
    const path = (): string =>
      this.#objectPath(name, { ...opts, namespace: opts.namespace ?? body.metadata?.namespace });
    return this.#call('PUT', path, writeQuery(opts), opts, { body });
  }

  /** Patch with the given strategy; `apply` requires `fieldManager`. */
  patch(name: string, patch: unknown, opts: PatchOptions): Promise<T> {
    if (opts.type === 'apply' && (opts.fieldManager === undefined || opts.fieldManager === '')) {
      return Promise.reject(new RavenError('ERR_INVALID_ARGUMENT', 'server-side apply needs a fieldManager'));
    }
    const query: Query = { ...writeQuery(opts), force: opts.type === 'apply' ? opts.force : undefined };
    return this.#call('PATCH', () => this.#objectPath(name, opts), query, opts, {
      body: patch,
      contentType: patchContentTypes[opts.type],
    });
  }

  /** Server-side apply of a full object (a shorthand for patch type `apply`). */
  apply(body: T, opts: WriteOptions & { fieldManager: string; force?: boolean }): Promise<T> {
    const name = body.metadata?.name;
    if (name === undefined)
      return Promise.reject(new RavenError('ERR_INVALID_ARGUMENT', 'server-side apply needs metadata.name'));
    return this.patch(name, body, {
      ...opts,
      ...optional('namespace', opts.namespace ?? body.metadata?.namespace),
      type: 'apply',
    });
  }

  /** Delete one object; answers the object (while finalizers run) or a Status. */
  delete(name: string, opts: DeleteObjectOptions = {}): Promise<T | KubeStatusLike> {
    return this.#call('DELETE', () => this.#objectPath(name, opts), {}, opts, { body: deleteBody(opts) });
  }

  /** Delete every object matching the selectors (in one namespace for namespaced resources). */
  deleteCollection(opts: DeleteObjectOptions & ListOptions = {}): Promise<KubeList<T> | KubeStatusLike> {
    const path = (): string => this.#collectionPath(this.#namespace(opts.namespace));
    const { continue: _c, limit: _l, ...selectors } = listQuery(opts);
    return this.#call('DELETE', path, selectors, opts, { body: deleteBody(opts) });
  }

  #namespace(namespace: string | undefined): string | undefined {
    return this.resource.namespaced ? (namespace ?? this.#client.namespace) : undefined;
  }

  #objectPath(name: string, opts: { namespace?: string | undefined; subresource?: string }): string {
    return resourcePath(this.resource, {
      name,
      ...(opts.subresource === undefined ? {} : { subresource: opts.subresource }),
      ...optional('namespace', this.#namespace(opts.namespace)),
    });
  }

  #collectionPath(namespace: string | undefined): string {
    return resourcePath(
      this.resource,
      optional('namespace', this.resource.namespaced ? namespace : undefined),
    );
  }

  /** `path` is a thunk so that a bad argument rejects the returned promise instead of throwing. */
  async #call<R>(
    method: string,
    pathOf: () => string,
    query: Query,
    opts: ResourceCallOptions,
    extra: { body?: unknown; contentType?: string } = {},
  ): Promise<R> {
    return await this.#client.request<R>({
      method,
      path: pathOf(),
      query,
      ...extra,
      ...(opts.signal === undefined ? {} : { signal: opts.signal }),
    });
  }
}

/** What delete calls may answer instead of the object. */
export interface KubeStatusLike {
  kind: 'Status';
  status?: string;
  details?: { name?: string; kind?: string; uid?: string };
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

function listQuery(opts: ListOptions): Query {
  return {
    labelSelector: opts.labelSelector,
    fieldSelector: opts.fieldSelector,
    limit: opts.limit,
    continue: opts.continue,
    resourceVersion: opts.resourceVersion,
    resourceVersionMatch: opts.resourceVersionMatch,
    timeoutSeconds: opts.timeoutSeconds,
  };
}

function writeQuery(opts: WriteOptions): Query {
  return {
    dryRun: opts.dryRun === true ? 'All' : undefined,
    fieldManager: opts.fieldManager,
    fieldValidation: opts.fieldValidation,
  };
}

function deleteBody(opts: DeleteObjectOptions): DeleteOptions {
  return {
    kind: 'DeleteOptions',
    apiVersion: 'v1',
    ...(opts.preconditions === undefined ? {} : { preconditions: opts.preconditions }),
    ...(opts.propagationPolicy === undefined ? {} : { propagationPolicy: opts.propagationPolicy }),
    ...(opts.gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds: opts.gracePeriodSeconds }),
    ...(opts.dryRun === true ? { dryRun: ['All'] } : {}),
  };
}
