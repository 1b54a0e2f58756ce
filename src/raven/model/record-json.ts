/**
 * A record's JSON, made once however many sinks write it. Every sink that sends JSON (stdout,
 * file, webhook, syslog, NATS, Redis, Loki, the dead-letter file) writes exactly
 * `JSON.stringify(record)`; serialising a change event means serialising its object and its
 * previous state, most of its cost, and with two such sinks it was done twice per change, then a
 * third time for the object by the checkpoint. The text is kept beside the record, in a WeakMap,
 * so it lives as long as the record does (until every sink settled it) and no longer.
 *
 * The same JSON as one line of UTF-8 bytes ({@link recordLine}) is encoded once too: the file and
 * the stdout sink write that very Buffer, and the checkpoint stores the object's bytes as a view
 * into it ({@link serialisedObject}), so neither the object nor the line is encoded twice.
 *
 * Records are not changed after they are built (`change-event.ts`: sinks and handlers read them),
 * which is what makes a text made for the first sink right for the next.
 */
import type { ChangeEvent } from './change-event.js';
import type { SinkRecord } from './gap-notice.js';

interface Serialised {
  text: string;
  /** Where the event's `object` is in `text`: [start, end) in UTF-16 code units. */
  object: [number, number] | undefined;
  /** `text` and a newline as UTF-8, once a sink asked for it. */
  line?: Buffer;
  /** Where the event's `object` is in `line`: [start, end) in bytes. */
  objectBytes?: [number, number];
}

const serialised = new WeakMap<SinkRecord, Serialised>();

function serialisedOf(record: SinkRecord): Serialised {
  let done = serialised.get(record);
  if (done === undefined) {
    done = record.type === 'gap' ? { text: JSON.stringify(record), object: undefined } : serialise(record);
    serialised.set(record, done);
  }
  return done;
}

/**
 * `JSON.stringify(record)`, made once per record.
 *
 * @example
 * const body = recordJson(record); // the same text for every sink
 */
export function recordJson(record: SinkRecord): string {
  return serialisedOf(record).text;
}

/**
 * `${JSON.stringify(record)}\n` as UTF-8, encoded once per record: write it, never change it.
 *
 * @example
 * await file.write(recordLine(record));
 */
export function recordLine(record: SinkRecord): Buffer {
  const done = serialisedOf(record);
  if (done.line === undefined) {
    done.line = Buffer.from(`${done.text}\n`);
    if (done.object !== undefined) {
      // Bytes before the object, then the object's own: both ASCII in the common case, where a
      // byte is a code unit and no counting is needed.
      const [start, end] = done.object;
      const ascii = done.line.length === done.text.length + 1;
      const from = ascii ? start : Buffer.byteLength(done.text.slice(0, start));
      const to = ascii ? end : from + Buffer.byteLength(done.text.slice(start, end));
      done.objectBytes = [from, to];
    }
  }
  return done.line;
}

/**
 * The JSON of `event.object` if a sink already serialised the event, else undefined: as UTF-8
 * bytes (a view into {@link recordLine}'s Buffer) once a sink asked for the line, else as text.
 */
export function serialisedObject(event: ChangeEvent): string | Uint8Array | undefined {
  const done = serialised.get(event);
  if (done?.object === undefined) return undefined;
  if (done.line !== undefined && done.objectBytes !== undefined)
    return done.line.subarray(done.objectBytes[0], done.objectBytes[1]);
  return done.text.slice(done.object[0], done.object[1]);
}

/**
 * The event as `JSON.stringify` writes it (own keys in order, undefined values left out), with
 * where the object's text is in it.
 */
function serialise(event: ChangeEvent): Serialised {
  let text = '{';
  let object: [number, number] | undefined;
  for (const key in event) {
    if (!Object.hasOwn(event, key)) continue;
    const value = (event as unknown as Record<string, unknown>)[key];
    // JSON.stringify leaves these keys out.
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    if (text.length > 1) text += ',';
    text += `${JSON.stringify(key)}:`;
    const json = JSON.stringify(value);
    if (key === 'object') object = [text.length, text.length + json.length];
    text += json;
  }
  return { text: `${text}}`, object };
}
