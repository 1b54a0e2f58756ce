/**
 * Decodes a list response (`PodList`, `ConfigMapList`, ...) incrementally: items are parsed and
 * yielded one at a time as their bytes arrive, and the whole body never exists as one string, so a
 * list larger than V8's maximum string length decodes, and memory holds one item at a time.
 *
 * The list's `metadata` may come before or after `items` in the document, so it is available from
 * {@link ListStream.result} once the items have been read to the end.
 *
 * Each item carries `kind` and `apiVersion`: where the server wrote them only on the list (as it
 * does for a built-in type), the item is given the list's (`item-type.ts`), as a watch event's
 * object has them.
 *
 * Errors (thrown from the iterator as {@link StreamDecodeError}s with the byte offset): a body that
 * is not a JSON object, malformed JSON, a truncated body, a `kind` that does not end in `List`, a
 * missing `items` or `kind`, or an item that is not an object.
 */
import type { ListMeta } from 'kubernetes-types/meta/v1.js';
import { utf8 } from './bytes.js';
import { parseBytesWithoutManagedFields } from './drop-managed-fields.js';
import { DEFAULT_MAX_LINE_BYTES } from './line-splitter.js';
import { ListScanner, type ListToken } from './list-scanner.js';
import { objectPeekOf, peekObject, type ObjectPeek } from './peek.js';
import { itemTypeOf, withItemType, type ItemType } from './item-type.js';
import { isPlainObject } from './plain-object.js';
import { StreamDecodeError } from './stream-decode-error.js';
import type { KubeObject } from './watch-event.js';
import { RavenError } from '../../errors/raven-error.js';

/** Options for {@link decodeList}. */
export interface DecodeListOptions {
  /** Drop each item's `metadata.managedFields`, cutting it from the text before parsing. */
  dropManagedFields?: boolean;
  /** Return false to drop an item before it is parsed (see `peek.ts`); undefined is no filter. */
  filter?: ((peek: ObjectPeek) => boolean) | undefined;
  /** Largest accepted item (or other top-level value), in bytes; default 128 MiB. */
  maxItemBytes?: number;
}

/** What the list said about itself, known once the body has been read to the end. */
export interface ListResult {
  kind: string;
  apiVersion: string | undefined;
  metadata: ListMeta;
  /** Items in the body, including any the filter dropped. */
  itemCount: number;
}

/**
 * The items of a list, as an async iterable (single use), and the list's own fields afterwards.
 *
 * @example
 * const list = decodeList(response.body, { dropManagedFields: true });
 * for await (const pod of list) store.add(pod);
 * const { metadata } = list.result(); // resourceVersion, continue, remainingItemCount
 */
export class ListStream<T extends object = KubeObject> implements AsyncIterable<T> {
  readonly #body: AsyncIterable<Uint8Array>;
  readonly #options: DecodeListOptions;
  #started = false;
  #result: ListResult | undefined;

  constructor(body: AsyncIterable<Uint8Array>, options: DecodeListOptions = {}) {
    this.#body = body;
    this.#options = options;
  }

  /** The list's kind, apiVersion, metadata and item count; throws until iteration has completed. */
  result(): ListResult {
    if (this.#result === undefined) {
      throw new RavenError(
        'ERR_INVALID_STATE',
        'the list result is only known after its items have been read to the end',
      );
    }
    return this.#result;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.#started) throw new RavenError('ERR_INVALID_STATE', 'a ListStream can be iterated only once');
    this.#started = true;
    return this.#items();
  }

  async *#items(): AsyncGenerator<T, void, undefined> {
    const decoder = new ListDecoder<T>(this.#options);
    for await (const chunk of this.#body) {
      for (const item of decoder.push(chunk)) yield item.object;
    }
    this.#result = decoder.end();
  }
}

/** One decoded list item and the bytes it was decoded from. */
export interface DecodedListItem<T extends object> {
  object: T;
  /** The item's bytes (possibly a view of the chunk they arrived in: copy them to keep them). */
  bytes: Uint8Array;
}

/**
 * The synchronous core of {@link ListStream}, for callers that read the body themselves:
 * {@link ListDecoder.push} each chunk and take the items it completes, then {@link ListDecoder.end}.
 * Same checks and errors as {@link decodeList}.
 */
export class ListDecoder<T extends object = KubeObject> {
  readonly #options: DecodeListOptions;
  readonly #scanner: ListScanner;
  readonly #fields = new ListFields();

  constructor(options: DecodeListOptions = {}) {
    this.#options = options;
    this.#scanner = new ListScanner(options.maxItemBytes ?? DEFAULT_MAX_LINE_BYTES);
  }

  /**
   * The items `chunk` completes (those the filter kept), in order, each decoded as it is taken: a
   * malformed item throws only after the items before it were taken.
   */
  *push(chunk: Uint8Array): Generator<DecodedListItem<T>, void, undefined> {
    for (const token of this.#scanner.push(chunk)) {
      if (token.kind === 'member') {
        this.#fields.take(token);
        continue;
      }
      const item = this.#decodeItem(token);
      if (item !== undefined) yield item;
    }
  }

  /** The list's own fields; throws when the body was truncated or is not a list. */
  end(): ListResult {
    this.#scanner.end();
    return this.#fields.finish(this.#scanner);
  }

  #decodeItem(token: ListToken & { kind: 'item' }): DecodedListItem<T> | undefined {
    const { filter } = this.#options;
    let text: string | undefined;
    const textOf = (): string => (text ??= utf8(token.bytes));
    const peek = filter === undefined ? undefined : peekObject(token.bytes);
    if (peek !== undefined && filter?.(peek) === false) return undefined;
    let value: unknown;
    try {
      value =
        this.#options.dropManagedFields === true
          ? parseBytesWithoutManagedFields(token.bytes, 'object', text)
          : JSON.parse(textOf());
    } catch (err) {
      const problem = `malformed list item ${token.index} (${(err as Error).message})`;
      throw new StreamDecodeError(problem, token, textOf(), { cause: err });
    }
    if (!isPlainObject(value))
      throw new StreamDecodeError(`list item ${token.index} is not an object`, token, textOf());
    if (filter !== undefined && peek === undefined && !filter(objectPeekOf(value))) return undefined;
    return { object: withItemType(value as T, this.#fields.itemType), bytes: token.bytes };
  }

  /** The type the list's items are of, once the list's `kind` has been read (it comes first). */
  get itemType(): ItemType | undefined {
    return this.#fields.itemType;
  }
}

/** Collects and checks the list's own top-level members as they arrive, in any order. */
class ListFields {
  kind: string | undefined;
  apiVersion: string | undefined;
  metadata: ListMeta = {};
  sawItems = false;
  /** Known once `kind` has been taken (and `apiVersion`, when it came before the items). */
  #itemType: ItemType | undefined;

  get itemType(): ItemType | undefined {
    if (this.kind === undefined) return undefined;
    if (this.#itemType?.apiVersion !== this.apiVersion) this.#itemType = undefined;
    return (this.#itemType ??= itemTypeOf(this.kind, this.apiVersion));
  }

  take(token: ListToken & { kind: 'member' }): void {
    const { key } = token;
    if (key !== 'kind' && key !== 'apiVersion' && key !== 'metadata' && key !== 'items') return;
    const text = utf8(token.bytes);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new StreamDecodeError(`malformed list ${key} (${(err as Error).message})`, token, text, {
        cause: err,
      });
    }
    if (key === 'kind') {
      if (typeof value !== 'string' || !value.endsWith('List')) {
        throw new StreamDecodeError('not a list: its kind does not end in "List"', token, text);
      }
      this.kind = value;
    } else if (key === 'apiVersion') {
      this.apiVersion = typeof value === 'string' ? value : undefined;
    } else if (key === 'metadata') {
      if (!isPlainObject(value)) throw new StreamDecodeError('list metadata is not an object', token, text);
      this.metadata = value;
    } else {
      // `"items": [...]` is streamed by the scanner; only `null` (an empty list) arrives here.
      if (value !== null) throw new StreamDecodeError('list items is neither an array nor null', token, text);
      this.sawItems = true;
    }
  }

  finish(scanner: ListScanner): ListResult {
    const at = { byteOffset: 0 };
    if (this.kind === undefined) throw new StreamDecodeError('not a list: the body has no kind', at);
    if (!this.sawItems && !scanner.sawItemsArray) {
      throw new StreamDecodeError(`not a list: the ${this.kind} body has no items`, at);
    }
    return {
      kind: this.kind,
      apiVersion: this.apiVersion,
      metadata: this.metadata,
      itemCount: scanner.itemCount,
    };
  }
}

/**
 * Decode a list body.
 *
 * @example
 * for await (const pod of decodeList<Pod>(body)) console.log(pod.metadata?.name);
 */
export function decodeList<T extends object = KubeObject>(
  body: AsyncIterable<Uint8Array>,
  options: DecodeListOptions = {},
): ListStream<T> {
  return new ListStream<T>(body, options);
}
