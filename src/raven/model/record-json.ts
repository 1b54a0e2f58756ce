/**
 * A record's JSON, made once however many sinks write it. Every sink that sends JSON (stdout,
 * file, webhook, syslog, NATS, Redis, Loki, the dead-letter file) writes the record's JSON: the
 * JSON value of `JSON.stringify(record)`; serialising a change event means serialising its object
 * and its previous state, most of its cost, and with two such sinks it was done twice per change,
 * then a third time for the object by the checkpoint.
 *
 * The object of a change is usually not serialised at all: its JSON is the bytes the watch stream
 * brought (managedFields cut out), kept for it by {@link keepServerJson} until its record is made.
 * That is the same JSON value, but not always the bytes `JSON.stringify` would write: the
 * apiserver escapes `<`, `>` and `&` (as `\u003c` ...), and an integer beyond 2^53 keeps the
 * digits the server sent. Serialising a 7.5 KB pod took about 33 µs; copying its bytes about 1.
 * An object changed on its way (a Secret's redacted copy) is another object, and is serialised.
 *
 * A change event is serialised straight to one line of UTF-8 bytes ({@link recordLine}): the file
 * and the stdout sink write that very Buffer, the checkpoint stores the object's bytes as a view
 * into it ({@link serialisedObject}), and the text ({@link recordJson}) is decoded from it for the
 * sinks that send text. Both are kept beside the record, in a WeakMap, so they live as long as the
 * record does (until every sink settled it) and no longer.
 *
 * An object's bytes are also kept beside the object, for a while, as a view into the line they
 * were written for: the `previous` of an object's next change is that very object (the watcher's
 * store keeps it), so its bytes are copied from there rather than serialised again, about a third
 * of the cost of a record. They are held in two generations of at most
 * {@link OBJECT_BYTES_BUDGET} / 2 bytes of lines each, and only while the object lives: whatever
 * the number of objects watched, at most that much memory, and an object that changes rarely has
 * its JSON made again.
 *
 * Records and the objects in them are not changed after they are built (`change-event.ts`: sinks
 * and handlers read them), which is what makes bytes made for the first sink right for the next,
 * and an object's bytes right for its next change.
 */
import type { KubeObject } from '../../client/kube-object.js';
import { isPlainObject } from '../../watch/decode/plain-object.js';
import type { ChangeEvent } from './change-event.js';
import type { SinkRecord } from './gap-notice.js';

interface Serialised {
  /** The JSON and a newline, as UTF-8. */
  line: Buffer;
  /** The JSON, once a sink asked for text. */
  text?: string;
  /** Where the event's `object` is in `line`: [start, end) in bytes. */
  object: [number, number] | undefined;
}

const serialised = new WeakMap<SinkRecord, Serialised>();

/** The most memory the kept object bytes take, both generations together. */
export const OBJECT_BYTES_BUDGET = 32 * 1024 * 1024;

/** The most memory the objects' JSON as the server sent it takes, until their records are made. */
export const SERVER_JSON_BUDGET = 8 * 1024 * 1024;

/** Objects' JSON bytes, in two generations: the current one is dropped to the older when full. */
class ObjectBytes {
  #current = new WeakMap<KubeObject, Buffer>();
  #older = new WeakMap<KubeObject, Buffer>();
  #bytes = 0;
  readonly #budget: number;

  /** `budget`: the most memory both generations hold together. */
  constructor(budget: number) {
    this.#budget = budget;
  }

  get(object: KubeObject): Buffer | undefined {
    return this.#current.get(object) ?? this.#older.get(object);
  }

  /** The bytes kept for `object`, forgotten. */
  take(object: KubeObject): Buffer | undefined {
    const bytes = this.get(object);
    if (bytes !== undefined) {
      this.#current.delete(object);
      this.#older.delete(object);
    }
    return bytes;
  }

  /** Keep `bytes` for `object`; `cost`: the memory they hold (the whole line they are a view into). */
  set(object: KubeObject, bytes: Buffer, cost: number): void {
    if (this.#bytes + cost > this.#budget / 2) {
      this.#older = this.#current;
      this.#current = new WeakMap();
      this.#bytes = 0;
    }
    this.#current.set(object, bytes);
    this.#bytes += cost;
  }
}

const objectBytes = new ObjectBytes(OBJECT_BYTES_BUDGET);
/** Objects' JSON as the watch stream brought it, until a record of them is serialised. */
const serverJson = new ObjectBytes(SERVER_JSON_BUDGET);

/**
 * Remember `json`, the bytes `object` was parsed from (a watcher's `objectJson`), so that a record
 * of `object` copies them instead of serialising it. Kept until then, in two generations of at
 * most {@link SERVER_JSON_BUDGET} / 2 bytes: an object whose record comes later (or never, with
 * no sink that writes JSON) is serialised as before.
 *
 * @example
 * watch({ transport, path, keepObjects: false, objectJson: keepServerJson });
 */
export function keepServerJson(object: KubeObject, json: Buffer): void {
  serverJson.set(object, json, json.length);
}

function serialisedOf(record: SinkRecord): Serialised {
  let done = serialised.get(record);
  if (done === undefined) {
    done =
      record.type === 'gap'
        ? { line: Buffer.from(`${JSON.stringify(record)}\n`), object: undefined }
        : serialise(record);
    serialised.set(record, done);
  }
  return done;
}

/**
 * The record's JSON (the value of `JSON.stringify(record)`, see the header), made once per record.
 *
 * @example
 * const body = recordJson(record); // the same text for every sink
 */
export function recordJson(record: SinkRecord): string {
  const done = serialisedOf(record);
  done.text ??= done.line.toString('utf8', 0, done.line.length - 1);
  return done.text;
}

/**
 * The record's JSON and a newline as UTF-8 (see the header), made once per record: write it,
 * never change it.
 *
 * @example
 * await file.write(recordLine(record));
 */
export function recordLine(record: SinkRecord): Buffer {
  return serialisedOf(record).line;
}

/**
 * The JSON of `event.object` as UTF-8 bytes (a view into {@link recordLine}'s Buffer) if a sink
 * already serialised the event, else undefined.
 */
export function serialisedObject(event: ChangeEvent): Uint8Array | undefined {
  const done = serialised.get(event);
  if (done?.object === undefined) return undefined;
  return done.line.subarray(done.object[0], done.object[1]);
}

/**
 * The event as `JSON.stringify` writes it (own keys in order, undefined values left out), as a
 * line of UTF-8, with where the object is in it. The line is allocated once and each part written
 * into it: the object as the server's bytes when they are kept, the previous state as the bytes
 * kept for it when it was a record's object (either as its JSON when none are), the rest as text. The object's bytes are then kept, as a view into the line.
 */
function serialise(event: ChangeEvent): Serialised {
  const parts: (string | Buffer)[] = [];
  let text = '{';
  let length = 0;
  let objectPart = -1;
  let first = true;
  for (const key in event) {
    if (!Object.hasOwn(event, key)) continue;
    const value = (event as unknown as Record<string, unknown>)[key];
    // JSON.stringify leaves these keys out.
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    text += `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    if ((key === 'object' || key === 'previous') && writtenAsMembers(value)) {
      const part =
        (key === 'previous' ? objectBytes.get(value as KubeObject) : serverJson.take(value as KubeObject)) ??
        JSON.stringify(value);
      if (key === 'object') objectPart = parts.length + 1;
      parts.push(text, part);
      length += Buffer.byteLength(text) + (typeof part === 'string' ? Buffer.byteLength(part) : part.length);
      text = '';
    } else {
      text += JSON.stringify(value);
    }
  }
  text += '}\n';
  parts.push(text);
  length += Buffer.byteLength(text);
  const line = Buffer.allocUnsafeSlow(length);
  let at = 0;
  let object: [number, number] | undefined;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string | Buffer;
    const start = at;
    if (typeof part === 'string') at += line.write(part, at);
    else {
      line.set(part, at);
      at += part.length;
    }
    if (i === objectPart) object = [start, at];
  }
  if (object !== undefined) objectBytes.set(event.object, line.subarray(object[0], object[1]), line.length);
  return { line, object };
}

/** An object JSON.stringify writes as its members: a JSON object with no toJSON of its own. */
function writtenAsMembers(value: unknown): boolean {
  return isPlainObject(value) && typeof value.toJSON !== 'function';
}
