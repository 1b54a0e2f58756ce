/**
 * What a watcher remembers of every object it has delivered: its resourceVersion and uid, and
 * (unless told not to) a copy of the bytes it was decoded from, so that `modified` can carry the
 * previous state and a relist can tell what changed, what vanished (tombstones, with their last
 * state) and what did not change (no event).
 *
 * Why bytes, and not the parsed object or its text: a parsed Kubernetes object is hundreds of
 * small heap objects that the garbage collector copies and traces for as long as they live
 * (keeping them made garbage collection a third of a default watch's CPU); its text is one flat
 * string, but young strings that survive are still copied by the collector, once or twice each. A
 * copy of the bytes lives outside the JavaScript heap, where the collector never copies or looks
 * inside it. Measured over 20,000 realistic pods of 7.6 KB, parsing each and keeping the latest
 * state of every object (docs/benchmarks.md): bytes cost 0 to 57 % more CPU than keeping nothing,
 * text 65 to 120 %, parsed objects 240 to 260 %. The previous state is decoded again only when a
 * consumer reads it (see {@link KnownObjects.previous}).
 *
 * An object is its uid: a name's incarnations are different objects. One watch stream brings a
 * name's changes in resourceVersion order, its deletion before its re-creation, so there is
 * normally one incarnation per name. A watcher resumed from states confirmed at different points
 * (a sharded daemon's parts, each resumed from its own checkpoint) can be told of two incarnations
 * of one name, and be replayed changes of the older after those of the newer: every lookup that
 * decides a change's type or its previous state is by name and uid
 * ({@link KnownObjects.incarnation}), and the extra incarnations are kept beside the entries until
 * they are deleted or a relist shows they are gone.
 *
 * Beside each object, a stamp of its managedFields entries (`field-managers.ts`), taken from the
 * bytes before managedFields are dropped: {@link KnownObjects.update} compares it with the new
 * state's and says which entries changed, so a `modified` event names its writers whether or not
 * objects or managedFields are kept.
 */
import { metadataKey, sameIncarnation } from '../client/object-key.js';
import { utf8 } from './decode/bytes.js';
import { decodeCbor } from './decode/cbor.js';
import { parseBytesWithoutManagedFields } from './decode/drop-managed-fields.js';
import { withItemType, type ItemType } from './decode/item-type.js';
import type { ObjectPeek } from './decode/peek.js';
import type { KubeObject } from './decode/watch-event.js';
import {
  changedFieldManagers,
  scanManagedFieldsBytes,
  scanManagedFieldsObject,
  type FieldManagerChange,
  type ManagedFieldsScan,
} from './field-managers.js';

export interface Known {
  resourceVersion: string | undefined;
  uid: string | undefined;
  /** A copy of the bytes the object was decoded from (JSON), when objects are kept. */
  bytes: Uint8Array | undefined;
  /** Whether `bytes` hold a whole watch event (`{"type":...,"object":{...}}`) rather than the object. */
  inEvent: boolean;
  /** Whether `bytes` are CBOR (a watch of `encoding: 'cbor'`) rather than JSON. */
  cbor: boolean;
  /** An object handed over as is (a resume's objects), when objects are kept. */
  object: KubeObject | undefined;
  /** The (re)list that last saw this object (see {@link KnownObjects.beginList}); 0: none. */
  listed: number;
  /** The stamp of its managedFields entries; undefined when unknown (or not taken). */
  managed: Int32Array | undefined;
}

/** Where an object came from: the bytes it was decoded from (a view that may be reused). */
export interface ObjectSource {
  bytes: Uint8Array;
  /** The bytes are CBOR, not JSON. */
  cbor?: boolean;
}

export interface KnownObjectsOptions {
  /** Keep a copy of each object's bytes, for `previous` and tombstones' last state. */
  keepObjects: boolean;
  /** The watcher decodes without managedFields: decode kept bytes the same way. */
  dropManagedFields: boolean;
  /** Stamp each object's managedFields entries, so {@link KnownObjects.update} can name the writers. Default false. */
  fieldManagers?: boolean;
}

export class KnownObjects<T extends KubeObject> {
  readonly #map = new Map<string, Known>();
  /** Incarnations other than the entry's, by uid (see the header); almost always empty. */
  readonly #older = new Map<string, { key: string; known: Known }>();
  readonly #keep: boolean;
  readonly #dropManagedFields: boolean;
  readonly #fieldManagers: boolean;
  /** The current (re)list, and how many known objects it has seen so far. */
  #list = 0;
  #listedCount = 0;

  constructor(options: KnownObjectsOptions) {
    this.#keep = options.keepObjects;
    this.#dropManagedFields = options.dropManagedFields;
    this.#fieldManagers = options.fieldManagers === true;
  }

  get size(): number {
    return this.#map.size + this.#older.size;
  }

  get(key: string): Known | undefined {
    return this.#map.get(key);
  }

  /**
   * The entry for the incarnation `uid` of the object at `key`: the entry when its uid is `uid`
   * (or either is unknown), another incarnation kept beside it, or undefined.
   */
  incarnation(key: string, uid: string | undefined): Known | undefined {
    const known = this.#map.get(key);
    if (known === undefined || sameIncarnation(known.uid, uid)) return known;
    if (this.#older.size === 0) return undefined;
    const older = this.#older.get(uid as string);
    return older?.key === key ? older.known : undefined;
  }

  /**
   * Remember `object` as delivered by a resume (no bytes): beside an entry of another incarnation
   * of the same name, not over it.
   */
  seed(key: string, object: T): void {
    const known = this.#map.get(key);
    const uid = object.metadata?.uid;
    if (known === undefined || sameIncarnation(known.uid, uid)) {
      this.set(key, object, undefined, false);
      return;
    }
    this.#older.set(uid as string, { key, known: this.#entry(object, undefined, false) });
  }

  /**
   * Make the incarnation `uid` kept beside the entry at `key` the entry (a list shows it), keeping
   * the entry it replaces beside it. Returns the entry, unchanged; undefined when `uid` is not kept.
   */
  promote(key: string, uid: string): Known | undefined {
    const older = this.#older.get(uid);
    if (older?.key !== key) return undefined;
    this.#older.delete(uid);
    this.demote(key);
    this.#map.set(key, older.known);
    return older.known;
  }

  /** Keep the entry at `key` beside the entries: another incarnation of its name is coming. */
  demote(key: string): void {
    const current = this.delete(key);
    if (current?.uid !== undefined) this.#older.set(current.uid, { key, known: current });
  }

  /**
   * Forget the incarnation `uid` of the object at `key` (deleted), returning what was known of it.
   */
  deleteIncarnation(key: string, uid: string | undefined): Known | undefined {
    const known = this.#map.get(key);
    if (known !== undefined && sameIncarnation(known.uid, uid)) return this.delete(key);
    const older = uid === undefined ? undefined : this.#older.get(uid);
    if (older?.key !== key) return undefined;
    this.#older.delete(uid as string);
    return older.known;
  }

  /** The incarnations kept beside the entries (each with its name's key), forgotten as they are taken. */
  takeOlder(): [string, Known][] {
    const out: [string, Known][] = [];
    for (const { key, known } of this.#older.values()) out.push([key, known]);
    this.#older.clear();
    return out;
  }

  /**
   * True when the object the peek describes is known at exactly that resourceVersion and uid. With
   * `listed`, such an object also counts as seen by the current (re)list.
   */
  unchanged(peek: ObjectPeek, listed = false): boolean {
    if (peek.name === undefined || peek.resourceVersion === undefined) return false;
    // A list shows the current incarnation: one kept beside the entry is parsed and promoted.
    const key = metadataKey(peek);
    const known = listed ? this.#map.get(key) : this.incarnation(key, peek.uid);
    const same =
      known !== undefined &&
      known.resourceVersion === peek.resourceVersion &&
      (peek.uid === undefined || peek.uid === known.uid);
    if (same && listed) this.listed(known);
    return same;
  }

  /**
   * Begin a (re)list: from now on {@link listed} marks what it sees, and {@link unlisted} gives
   * the rest. A mark is a number on each entry rather than a set of keys: at the end of a list of
   * 150,000 objects, a set cost a lookup by key for every known object (about 100 ms in one
   * go, stalling the event loop), where counting the marks usually shows there is nothing to look
   * for, and finding what is left is one pass over the entries.
   */
  beginList(): void {
    this.#list++;
    this.#listedCount = 0;
  }

  /** Count `known` (an entry of this map) as seen by the current (re)list. */
  listed(known: Known): void {
    if (known.listed === this.#list) return;
    known.listed = this.#list;
    this.#listedCount++;
  }

  /** The entries the current (re)list has not seen, with their keys; none when it saw them all. */
  unlisted(): [string, Known][] {
    const out: [string, Known][] = [];
    if (this.#listedCount === this.#map.size) return out;
    for (const entry of this.#map) if (entry[1].listed !== this.#list) out.push(entry);
    return out;
  }

  /**
   * Remember `object` as delivered, decoded from `source` (a list item, or a whole watch event
   * when `inEvent`), and return its entry. An entry already there is updated in place: take what
   * is needed from it first.
   */
  set(key: string, object: T, source: ObjectSource | undefined, inEvent: boolean): Known {
    const known = this.#map.get(key);
    if (known !== undefined) {
      this.update(known, object, source, inEvent);
      return known;
    }
    const entry = this.#entry(object, source, inEvent);
    this.#map.set(key, entry);
    return entry;
  }

  #entry(object: T, source: ObjectSource | undefined, inEvent: boolean): Known {
    const kept = this.#kept(source);
    return {
      resourceVersion: object.metadata?.resourceVersion,
      uid: object.metadata?.uid,
      bytes: kept,
      inEvent,
      cbor: source?.cbor === true,
      object: this.#keep && kept === undefined ? object : undefined,
      listed: 0,
      managed: this.#scan(object, source, inEvent)?.stamp,
    };
  }

  /**
   * Update an entry (from {@link get}) in place: the object is now `object`, from `source`. Returns
   * the managedFields entries that differ from the entry's previous state (undefined: unknown).
   */
  update(
    known: Known,
    object: T,
    source: ObjectSource | undefined,
    inEvent: boolean,
  ): FieldManagerChange[] | undefined {
    const scan = this.#scan(object, source, inEvent);
    const changes = changedFieldManagers(known.managed, scan);
    known.managed = scan?.stamp;
    const kept = this.#kept(source);
    known.resourceVersion = object.metadata?.resourceVersion;
    known.uid = object.metadata?.uid;
    known.bytes = kept;
    known.inEvent = inEvent;
    known.cbor = source?.cbor === true;
    known.object = this.#keep && kept === undefined ? object : undefined;
    return changes;
  }

  /**
   * The managedFields entries of `object`: from its JSON bytes, where they are even when the
   * watcher drops them; else from the object when it still has them. Unknown for CBOR bytes
   * decoded without them.
   */
  #scan(object: T, source: ObjectSource | undefined, inEvent: boolean): ManagedFieldsScan | undefined {
    if (!this.#fieldManagers) return undefined;
    if (source !== undefined) {
      if (source.cbor !== true) return scanManagedFieldsBytes(source.bytes, inEvent);
      return this.#dropManagedFields ? undefined : scanManagedFieldsObject(object);
    }
    // Handed over as is (a resume's objects): known only when they kept their managedFields.
    return object.metadata?.managedFields === undefined ? undefined : scanManagedFieldsObject(object);
  }

  delete(key: string): Known | undefined {
    const known = this.#map.get(key);
    if (known === undefined) return undefined;
    this.#map.delete(key);
    // 0: never seen by a list (an entry made before the first one, by a resume or a watch event).
    if (known.listed !== 0 && known.listed === this.#list) this.#listedCount--;
    return known;
  }

  /**
   * The state `known` holds now, parsed on the first call of the returned function and then
   * remembered; undefined when objects are not kept. Take it before `known` is updated.
   */
  previous(known: Known): () => T | undefined {
    const { bytes, inEvent, cbor, object } = known;
    if (bytes === undefined) return () => object as T | undefined;
    let parsed: T | undefined;
    return () => (parsed ??= this.#parse(bytes, inEvent, cbor));
  }

  /** The last known state, or a stub carrying what is known when objects are not kept. */
  lastState(key: string, known: Known): T {
    if (known.bytes !== undefined) return this.#parse(known.bytes, known.inEvent, known.cbor);
    if (known.object !== undefined) return known.object as T;
    const slash = key.indexOf('/');
    const metadata =
      slash < 0
        ? { name: key, resourceVersion: known.resourceVersion, uid: known.uid }
        : {
            namespace: key.slice(0, slash),
            name: key.slice(slash + 1),
            resourceVersion: known.resourceVersion,
            uid: known.uid,
          };
    return { metadata } as T;
  }

  /**
   * A copy of exactly the source's bytes: a view would keep the whole chunk it came in alive. A
   * plain Uint8Array, not a Buffer: Buffer's constructor costs more than the copy itself.
   */
  #kept(source: ObjectSource | undefined): Uint8Array | undefined {
    if (!this.#keep || source === undefined) return undefined;
    const { buffer, byteOffset, byteLength } = source.bytes;
    return new Uint8Array(buffer, byteOffset, byteLength).slice();
  }

  /**
   * The type of the listed items, which a list item's bytes do not carry where the server wrote
   * it only on the list (`item-type.ts`): the watcher sets it as it reads a list, and a list
   * item's kept bytes are given it when decoded again, as the item was.
   */
  itemType: ItemType | undefined;

  /** Decoded as the watcher decoded it; the bytes were valid then, so this cannot throw. */
  #parse(bytes: Uint8Array, inEvent: boolean, cbor: boolean): T {
    const value = (
      cbor
        ? decodeCbor(bytes, { dropManagedFields: this.#dropManagedFields })
        : this.#dropManagedFields
          ? parseBytesWithoutManagedFields(bytes, inEvent ? 'event' : 'object')
          : JSON.parse(utf8(bytes))
    ) as { object: T } | T;
    return inEvent ? (value as { object: T }).object : withItemType(value as T, this.itemType);
  }
}
