/**
 * Find-or-create with crash safety: before creating, look for the resource by its tags, then by
 * its description (the identity written in the create call itself). A resource found only
 * by description — created, then the process died before its tags were written — is adopted: its
 * tags are written now. So a crash between any two calls neither leaks a resource (the next pass
 * or the garbage collector finds it) nor creates it twice. Collections that take tags in the create
 * call itself (ports, Octavia) never hold an untagged resource of ours: the description is not
 * looked up there. A caller that has already listed by a wider tag set (every uid of an owner)
 * passes that list, and no call is made to find.
 */
import type { Filters } from '../openstack/rest-collection.js';
import type { Identity } from './identity.js';

/** The part of a collection this needs. */
export interface Collection<T, C> {
  list(filters?: Filters): Promise<T[]>;
  create(input: C & { tags?: readonly string[] }): Promise<T>;
  setTags?(id: string, tags: readonly string[]): Promise<string[]>;
  /** Tags are written by the create call itself. */
  readonly tagsOnCreate?: boolean;
}

interface Described {
  id: string;
  name?: string | undefined;
  description?: string | undefined;
  tags?: string[] | undefined;
}

/** Every resource with exactly this identity (tags, or an untagged one with this description). */
export async function findOwned<T extends Described>(
  collection: Collection<T, never>,
  identity: Identity,
  filters: Filters = {},
  listed?: readonly T[],
): Promise<T[]> {
  const tagged =
    listed?.filter((r) => identity.tags.every((t) => r.tags?.includes(t) === true)) ??
    (await collection.list({ ...filters, tags: identity.tags }));
  const matching = tagged.filter(
    (r) => r.description === undefined || r.description === identity.description,
  );
  if (matching.length > 0 || collection.tagsOnCreate === true) return matching;
  // Untagged (the process died between create and tagging): the description written at create names it.
  const described = await collection.list({ ...filters, description: identity.description });
  const adopted: T[] = [];
  for (const r of described) {
    if (r.description !== identity.description) continue;
    if (collection.setTags !== undefined)
      await collection.setTags(r.id, [...new Set([...(r.tags ?? []), ...identity.tags])]);
    adopted.push({ ...r, tags: identity.tags });
  }
  return adopted;
}

/** The resource with this identity, created with `body` when there is none. Extra duplicates are returned for removal. */
export async function ensureOwned<T extends Described, C extends object>(
  collection: Collection<T, C>,
  identity: Identity,
  body: C,
  filters: Filters = {},
  withName = true,
  listed?: readonly T[],
): Promise<{ resource: T; created: boolean; duplicates: T[] }> {
  const found = await findOwned(collection as unknown as Collection<T, never>, identity, filters, listed);
  const [first, ...rest] = found;
  if (first !== undefined) return { resource: first, created: false, duplicates: rest };
  const resource = await collection.create({
    ...body,
    ...(withName ? { name: identity.name } : {}),
    description: identity.description,
    tags: identity.tags,
  });
  return { resource, created: true, duplicates: [] };
}
