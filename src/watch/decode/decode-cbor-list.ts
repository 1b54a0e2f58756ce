/**
 * Decodes a list body the apiserver sent as CBOR (`application/cbor`): the counterpart of
 * {@link ListDecoder} for a watcher that asked for CBOR. A CBOR list is one data item, so the body
 * is read whole before its items are decoded; each item is then decoded on its own (and its bytes
 * can be kept), and given the list's `kind` and `apiVersion` where it has none (`item-type.ts`).
 * The checks are the JSON decoder's: a kind ending in `List`, `items` an array or null, `metadata`
 * an object, every item an object.
 */
import { concatBytes } from './bytes.js';
import { CborError, decodeCbor, splitCborList } from './cbor.js';
import type { DecodeListOptions, ListResult } from './decode-list.js';
import { itemTypeOf, withItemType } from './item-type.js';
import { objectPeekOf } from './peek.js';
import { isPlainObject } from './plain-object.js';
import { StreamDecodeError } from './stream-decode-error.js';
import type { KubeObject } from './watch-event.js';

/** One decoded item and the CBOR bytes it came from. */
export interface CborListItem<T extends object> {
  object: T;
  bytes: Uint8Array;
  cbor: true;
}

/**
 * The items of a CBOR list body (those `filter` kept, which sees each item once decoded) and the
 * list's own fields.
 */
export async function decodeCborList<T extends object = KubeObject>(
  body: AsyncIterable<Uint8Array>,
  options: Pick<DecodeListOptions, 'dropManagedFields' | 'filter'> = {},
): Promise<{ items: CborListItem<T>[]; result: ListResult }> {
  const pieces: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    pieces.push(chunk);
    total += chunk.byteLength;
  }
  const bytes = concatBytes(pieces, total);
  const fail = (problem: string, byteOffset = 0, cause?: unknown): never => {
    throw new StreamDecodeError(problem, { byteOffset }, '', { cause });
  };
  let parts: ReturnType<typeof splitCborList> | undefined;
  try {
    parts = splitCborList(bytes);
  } catch (error) {
    if (!(error instanceof CborError)) throw error;
    return fail(`malformed CBOR list (${error.message})`, error.offset, error);
  }
  const { fields, offsets } = parts;
  const { kind, apiVersion, metadata } = fields;
  if (typeof kind !== 'string') return fail('not a list: the body has no kind');
  if (!kind.endsWith('List')) return fail('not a list: its kind does not end in "List"');
  if (parts.items === undefined && !('items' in fields))
    return fail(`not a list: the ${kind} body has no items`);
  if (fields.items !== undefined && fields.items !== null)
    return fail('list items is neither an array nor null');
  if (metadata !== undefined && !isPlainObject(metadata)) return fail('list metadata is not an object');
  const items: CborListItem<T>[] = [];
  const decode = { dropManagedFields: options.dropManagedFields === true };
  const type = itemTypeOf(kind, typeof apiVersion === 'string' ? apiVersion : undefined);
  for (const [i, item] of (parts.items ?? []).entries()) {
    let object: unknown;
    try {
      object = decodeCbor(item, decode);
    } catch (error) {
      if (!(error instanceof CborError)) throw error;
      return fail(`malformed CBOR list item (${error.message})`, offsets[i], error);
    }
    if (!isPlainObject(object)) return fail('list item is not an object', offsets[i]);
    if (options.filter !== undefined && !options.filter(objectPeekOf(object))) continue;
    items.push({ object: withItemType(object as T, type), bytes: item, cbor: true });
  }
  return {
    items,
    result: {
      kind,
      apiVersion: typeof apiVersion === 'string' ? apiVersion : undefined,
      metadata: metadata ?? {},
      itemCount: parts.items?.length ?? 0,
    },
  };
}
