/**
 * Who wrote a change, from `metadata.managedFields`: every write names its field manager, and the
 * apiserver records, per manager, operation (`Apply` or `Update`) and subresource, the time of its
 * last write and the fields it owns (`fieldsV1`). The entries that differ between two states of
 * an object are the writers of what changed between them.
 *
 * The watcher keeps, for each object it knows, a stamp of its entries: three 32-bit FNV-1a
 * hashes per entry (identity: manager, operation and subresource; time; fieldsV1), in one
 * `Int32Array`, so the previous state's entries cost a few bytes per object and nothing to the
 * garbage collector, whether or not managedFields are kept. The stamp is taken from the raw JSON
 * bytes an object was decoded from (before managedFields are cut out of them: see
 * `decode/managed-fields-entries.ts`), or from a parsed object that still has them. Only the
 * entries that changed are read in full. Hashes can collide: a changed entry goes unnoticed with a
 * chance of 2^-32.
 *
 * Compared only: manager, operation, subresource, time and fieldsV1 (not apiVersion or
 * fieldsType). Entries are matched by identity, so a reordered list changes nothing.
 */
import type { KubeObject } from './decode/watch-event.js';
import { utf8 } from './decode/bytes.js';
import { managedFieldsEntries, type EntrySpans } from './decode/managed-fields-entries.js';
import { MANAGED_FIELDS_PARENTS, managedFieldsValue } from './decode/managed-fields-span.js';
import { isPlainObject } from './decode/plain-object.js';

/**
 * A managedFields entry that differs from the previous state's: its manager wrote this change, or
 * (`change: 'fields'` alone) lost or gained fields through someone else's write.
 */
export interface FieldManagerChange {
  manager: string;
  /** `Apply` (server-side apply) or `Update` (create, update, patch). */
  operation: string;
  /** The subresource written (`status`, `scale`), absent for the main resource. */
  subresource?: string;
  /** When the manager last wrote (RFC 3339, seconds), as the apiserver recorded it. */
  time?: string;
  /**
   * What differs: `new` (no such entry before), `time` (written again: its time changed; its
   * fields may have too), `fields` (only its field set changed).
   */
  change: 'new' | 'time' | 'fields';
  /** The fields the manager owns now: the entry's `fieldsV1`, as JSON text. */
  fieldsV1: string;
}

/** The entries of one state: a stamp to keep, and a way to read one entry in full. */
export interface ManagedFieldsScan {
  /** Per entry: identity, time and fieldsV1 hashes. */
  readonly stamp: Int32Array;
  /** Entry `index` in full (without `change`). */
  read(index: number): Omit<FieldManagerChange, 'change'>;
}

const EMPTY = new Int32Array(0);
const OFFSET_BASIS = 0x811c9dc5 | 0;
const PRIME = 0x01000193;

function hashBytes(h: number, bytes: Uint8Array, start: number, end: number): number {
  for (let i = start; i < end; i++) h = Math.imul(h ^ (bytes[i] as number), PRIME);
  return h;
}

function hashText(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), PRIME);
  return h;
}

/** A separator between the parts of the identity, so `a`+`bc` and `ab`+`c` differ. */
function separate(h: number): number {
  return Math.imul(h ^ 0xff, PRIME);
}

/**
 * The entries of a JSON object's or watch event's bytes (`inEvent`), read where they are written;
 * undefined when they cannot be found for sure.
 */
export function scanManagedFieldsBytes(bytes: Uint8Array, inEvent: boolean): ManagedFieldsScan | undefined {
  const value = managedFieldsValue(bytes, MANAGED_FIELDS_PARENTS[inEvent ? 'event' : 'object']);
  if (value === undefined) {
    // No such key anywhere: the object has no entries. Found but not for sure: unknown.
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(KEY)
      ? undefined
      : { stamp: EMPTY, read: noEntry };
  }
  const entries = managedFieldsEntries(bytes, value[0], value[1]);
  if (entries === undefined) return undefined;
  const stamp = new Int32Array(entries.length * 3);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as EntrySpans;
    let id = hashBytes(OFFSET_BASIS, bytes, e.managerStart, e.managerEnd);
    id = hashBytes(separate(id), bytes, e.operationStart, e.operationEnd);
    id = hashBytes(separate(id), bytes, e.subresourceStart, e.subresourceEnd);
    stamp[i * 3] = id;
    stamp[i * 3 + 1] = hashBytes(OFFSET_BASIS, bytes, e.timeStart, e.timeEnd);
    stamp[i * 3 + 2] = hashBytes(OFFSET_BASIS, bytes, e.fieldsStart, e.fieldsEnd);
  }
  return {
    stamp,
    read: (index) => {
      const e = entries[index] as EntrySpans;
      const text = (start: number, end: number): string | undefined =>
        start < 0 ? undefined : (JSON.parse(utf8(bytes.subarray(start - 1, end + 1))) as string);
      return entryOf(
        text(e.managerStart, e.managerEnd),
        text(e.operationStart, e.operationEnd),
        text(e.subresourceStart, e.subresourceEnd),
        text(e.timeStart, e.timeEnd),
        e.fieldsStart < 0 ? '{}' : utf8(bytes.subarray(e.fieldsStart, e.fieldsEnd)),
      );
    },
  };
}

const KEY = Buffer.from('"managedFields":');

function noEntry(): never {
  throw new RangeError('no such managedFields entry');
}

/** The entries of a parsed object that still has its managedFields (none when it has no such member). */
export function scanManagedFieldsObject(object: KubeObject): ManagedFieldsScan {
  const list = object.metadata?.managedFields;
  if (!Array.isArray(list) || list.length === 0) return { stamp: EMPTY, read: noEntry };
  const entries = list.filter(isPlainObject);
  const stamp = new Int32Array(entries.length * 3);
  const fields = entries.map((e) => (e.fieldsV1 === undefined ? '' : JSON.stringify(e.fieldsV1)));
  const str = (value: unknown): string => (typeof value === 'string' ? value : '');
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as Record<string, unknown>;
    let id = hashText(OFFSET_BASIS, str(e.manager));
    id = hashText(separate(id), str(e.operation));
    id = hashText(separate(id), str(e.subresource));
    stamp[i * 3] = id;
    stamp[i * 3 + 1] = hashText(OFFSET_BASIS, str(e.time));
    stamp[i * 3 + 2] = hashText(OFFSET_BASIS, fields[i] as string);
  }
  return {
    stamp,
    read: (index) => {
      const e = entries[index] as Record<string, unknown>;
      const opt = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
      return entryOf(
        opt(e.manager),
        opt(e.operation),
        opt(e.subresource),
        opt(e.time),
        fields[index] === '' ? '{}' : (fields[index] as string),
      );
    },
  };
}

function entryOf(
  manager: string | undefined,
  operation: string | undefined,
  subresource: string | undefined,
  time: string | undefined,
  fieldsV1: string,
): Omit<FieldManagerChange, 'change'> {
  return {
    manager: manager ?? '',
    operation: operation ?? '',
    ...(subresource === undefined || subresource === '' ? {} : { subresource }),
    ...(time === undefined ? {} : { time }),
    fieldsV1,
  };
}

/**
 * The entries of `current` that differ from those stamped in `previous`, in `current`'s order;
 * undefined when either side is unknown. An entry that vanished (its manager lost every field) is
 * not listed: it wrote nothing.
 *
 * @example
 * const changes = changedFieldManagers(known.stamp, scanManagedFieldsObject(pod));
 * // => [{ manager: 'kubectl', operation: 'Update', time: '…', change: 'time', fieldsV1: '{"f:spec":…}' }]
 */
export function changedFieldManagers(
  previous: Int32Array | undefined,
  current: ManagedFieldsScan | undefined,
): FieldManagerChange[] | undefined {
  if (previous === undefined || current === undefined) return undefined;
  const out: FieldManagerChange[] = [];
  const now = current.stamp;
  for (let i = 0; i < now.length; i += 3) {
    let change: FieldManagerChange['change'] | undefined = 'new';
    for (let j = 0; j < previous.length; j += 3) {
      if (previous[j] !== now[i]) continue;
      change =
        previous[j + 1] !== now[i + 1] ? 'time' : previous[j + 2] !== now[i + 2] ? 'fields' : undefined;
      break;
    }
    if (change !== undefined) out.push({ ...current.read(i / 3), change });
  }
  return out;
}
