/**
 * An in-memory coordination.k8s.io/v1 Lease collection for the elector's and the lease group's
 * unit tests: optimistic concurrency (resourceVersion on update, uid and resourceVersion
 * preconditions on delete), label selection on list, and a client per caller that can be cut
 * off (`unreachable`): a caller that cannot reach the apiserver for a chosen stretch is a fault
 * the real apiserver cannot produce per client on demand.
 */
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { LeaseClient } from '../../../src/controller/leader-election.js';
import { apiErrorFromResponse } from '../../../src/errors/api-error.js';
import { TransportError } from '../../../src/errors/raven-error.js';

export class LeaseCollection {
  readonly leases = new Map<string, Lease>();
  readonly unreachable = new Set<string>();
  #rv = 0;

  clientFor(identity: string): LeaseClient {
    return {
      request: async <T>(options: { method: string; path: string; body?: unknown }): Promise<T> => {
        await Promise.resolve();
        if (this.unreachable.has(identity)) throw new TransportError('connect ECONNREFUSED');
        const status = (code: number, reason: string) =>
          apiErrorFromResponse(code, JSON.stringify({ kind: 'Status', code, reason, message: reason }));
        const [path = '', query = ''] = options.path.split('?');
        const name = /\/leases\/([^/]+)$/.exec(path)?.[1];
        const body = options.body as Lease;
        const stored = (lease: Lease): T => {
          const next = {
            ...lease,
            metadata: {
              ...lease.metadata,
              uid: lease.metadata?.uid ?? `uid-${this.#rv}`,
              resourceVersion: String(++this.#rv),
            },
          };
          this.leases.set(next.metadata.name ?? '', next);
          return structuredClone(next) as T;
        };
        switch (options.method) {
          case 'GET': {
            if (name === undefined) {
              const selector = decodeURIComponent(new URLSearchParams(query).get('labelSelector') ?? '');
              const [key, value] = selector.split('=');
              const items = [...this.leases.values()].filter(
                (l) => l.metadata?.labels?.[key ?? ''] === value,
              );
              return structuredClone({ items }) as T;
            }
            const lease = this.leases.get(name);
            if (lease === undefined) throw status(404, 'NotFound');
            return structuredClone(lease) as T;
          }
          case 'POST':
            if (this.leases.has(body.metadata?.name ?? '')) throw status(409, 'AlreadyExists');
            return stored({
              ...body,
              metadata: { ...body.metadata, uid: `uid-${body.metadata?.name}-${this.#rv}` },
            });
          case 'PUT': {
            const current = this.leases.get(name ?? '');
            if (current === undefined) throw status(404, 'NotFound');
            if (body.metadata?.resourceVersion !== current.metadata?.resourceVersion)
              throw status(409, 'Conflict');
            return stored(body);
          }
          case 'DELETE': {
            const current = this.leases.get(name ?? '');
            if (current === undefined) throw status(404, 'NotFound');
            const { uid, resourceVersion } =
              (options.body as { preconditions?: { uid?: string; resourceVersion?: string } })
                .preconditions ?? {};
            if (uid !== undefined && uid !== current.metadata?.uid) throw status(409, 'Conflict');
            if (resourceVersion !== undefined && resourceVersion !== current.metadata?.resourceVersion)
              throw status(409, 'Conflict');
            this.leases.delete(name ?? '');
            return {} as T;
          }
          default:
            throw new Error(`unexpected ${options.method}`);
        }
      },
    };
  }
}
