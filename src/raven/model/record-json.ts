/**
 * A record's JSON text, made once however many sinks write it. Every sink that sends JSON (stdout,
 * file, webhook, syslog, NATS, Redis, Loki, the dead-letter file) writes exactly
 * `JSON.stringify(record)`; serialising a change event means serialising its object and its
 * previous state, most of its cost, and with two such sinks it was done twice per change, then a
 * third time for the object by the checkpoint. The text is kept beside the record, in a WeakMap,
 * so it lives as long as the record does (until every sink settled it) and no longer.
 *
 * The object's own text is kept with it ({@link serialisedObject}), so the checkpoint stores the
 * object a sink just wrote without serialising it again.
 *
 * Records are not changed after they are built (`change-event.ts`: sinks and handlers read them),
 * which is what makes a text made for the first sink right for the next.
 */
import type { ChangeEvent } from './change-event.js';
import type { SinkRecord } from './gap-notice.js';

interface Serialised {
  text: string;
  /** The text of the event's `object`, inside `text`. */
  object: string | undefined;
}

const serialised = new WeakMap<SinkRecord, Serialised>();

/**
 * `JSON.stringify(record)`, made once per record.
 *
 * @example
 * const line = `${recordJson(record)}\n`; // the same text for every sink
 */
export function recordJson(record: SinkRecord): string {
  let done = serialised.get(record);
  if (done === undefined) {
    done = record.type === 'gap' ? { text: JSON.stringify(record), object: undefined } : serialise(record);
    serialised.set(record, done);
  }
  return done.text;
}

/** The JSON text of `event.object` if a sink already serialised the event, else undefined. */
export function serialisedObject(event: ChangeEvent): string | undefined {
  return serialised.get(event)?.object;
}

/**
 * The event as `JSON.stringify` writes it (own keys in order, undefined values left out), with the
 * object's text made apart so that it can be kept.
 */
function serialise(event: ChangeEvent): Serialised {
  const object = JSON.stringify(event.object);
  const fields: string[] = [];
  for (const [key, value] of Object.entries(event)) {
    // JSON.stringify leaves these keys out.
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    fields.push(`${JSON.stringify(key)}:${key === 'object' ? object : JSON.stringify(value)}`);
  }
  return { text: `{${fields.join(',')}}`, object };
}
