/**
 * How the translator recognises what it made. Every OpenStack resource it creates carries:
 * - a deterministic `name` (`raven-<cluster>-<role>-<namespace>-<name>`, truncated) for people;
 * - a `description` `raven:<cluster>:<role>:<kind>:<namespace>/<name>:<uid>` that says exactly which
 *   Kubernetes object it belongs to, set in the create call itself, so even a resource whose tags
 *   were never written (a crash between the create and the tag call) is found again and adopted;
 * - tags: `raven.c=<cluster>`, `raven.r=<role>`, `raven.u=<uid>` and `raven.o=<hash of the object key>`
 *   (tags are short and have no room for names), used to list what belongs to an object.
 */
import { metadataKey } from '../client/object-key.js';
import { createHash } from 'node:crypto';

/** What a resource is for. */
export type Role =
  | 'service-net'
  | 'service-subnet'
  | 'service-subnet-v6'
  | 'router'
  | 'pod-pool'
  | 'pod-pool-v6'
  | 'ns-net'
  | 'ns-subnet'
  | 'ns-subnet-v6'
  | 'ns-sg'
  | 'np-sg'
  | 'egress-sg'
  | 'pod-port'
  | 'pool-port'
  | 'vip-port'
  | 'lb'
  | 'listener'
  | 'pool'
  | 'fip';

export type OwnerKind = 'Cluster' | 'Namespace' | 'Pod' | 'Service' | 'NetworkPolicy';

export interface Owner {
  kind: OwnerKind;
  namespace?: string | undefined;
  name: string;
  uid: string;
}

export interface Identity {
  name: string;
  description: string;
  tags: string[];
}

const NAME_MAX = 255;

/** The key of an owner: `namespace/name` or `name`. */
export function ownerKey(owner: Pick<Owner, 'namespace' | 'name'>): string {
  return metadataKey(owner);
}

/** A short stable hash of an object key, for tags. */
export function keyHash(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

export function clusterTag(cluster: string): string {
  return `raven.c=${cluster}`;
}

export function roleTag(role: Role): string {
  return `raven.r=${role}`;
}

export function ownerTag(key: string): string {
  return `raven.o=${keyHash(key)}`;
}

export function uidTag(uid: string): string {
  return `raven.u=${uid}`;
}

/** Name, description and tags for a resource of `role` owned by `owner`. */
export function identityOf(cluster: string, role: Role, owner: Owner, suffix = ''): Identity {
  const key = ownerKey(owner);
  const readable = `raven-${cluster}-${role}-${key.replace('/', '-')}${suffix === '' ? '' : `-${suffix}`}`;
  return {
    name: readable.length > NAME_MAX ? readable.slice(0, NAME_MAX) : readable,
    description: `raven:${cluster}:${role}:${owner.kind}:${key}:${owner.uid}${suffix === '' ? '' : `:${suffix}`}`,
    tags: [clusterTag(cluster), roleTag(role), uidTag(owner.uid), ownerTag(key)],
  };
}

/** What a description says, when it is one of ours for `cluster`. */
export function parseDescription(
  cluster: string,
  description: string | undefined,
): { role: Role; kind: OwnerKind; key: string; uid: string; suffix: string | undefined } | undefined {
  if (description === undefined) return undefined;
  const parts = description.split(':');
  if (parts.length < 6 || parts[0] !== 'raven' || parts[1] !== cluster) return undefined;
  const [, , role, kind, key, uid, ...rest] = parts;
  if (role === undefined || kind === undefined || key === undefined || uid === undefined) return undefined;
  return {
    role: role as Role,
    kind: kind as OwnerKind,
    key,
    uid,
    suffix: rest.length > 0 ? rest.join(':') : undefined,
  };
}
