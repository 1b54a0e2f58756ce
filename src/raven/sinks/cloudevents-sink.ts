/**
 * POSTs each change event as a CloudEvent 1.0 in HTTP structured mode
 * (`content-type: application/cloudevents+json`). Attributes:
 *
 * - `id`: the event id; `source`: configured (a URI-reference naming this Raven, e.g. `/raven/prod`);
 * - `type`: `io.k8s.raven.<resource>[.<group>].<added|modified|deleted>`, the resource named as in
 *   `kubectl get deployments.apps`: `io.k8s.raven.deployments.apps.modified`, and for the core
 *   group `io.k8s.raven.pods.added`; the last segment is always the change type;
 * - `subject`: `namespace/name` (or `name`); `time`: when Raven saw the change;
 * - `datacontenttype: application/json`; `data`: the whole change event (object, previous, diff);
 * - extensions `ravenwatcher` and `ravenorigin`.
 *
 * A gap notice (for a sink that opted in) is a CloudEvent of type `<prefix>.<resource>[.<group>].gap`
 * with the watcher's name as `subject`, the notice as `data` and `ravenwatcher`.
 *
 * Status classification is the webhook's: 2xx delivered; 408, 429, 5xx and network failures retryable.
 */
import type { Dispatcher } from 'undici';
import { ConfigError } from '../../errors/raven-error.js';
import type { Clock } from '../../util/clock.js';
import { eventObjectKey } from '../model/change-event.js';
import type { SinkRecord } from '../model/gap-notice.js';
import { checkExtraHeaders, checkUrl, httpPost, SinkPool } from './http-post.js';
import type { Sink } from './sink.js';

export interface CloudEventsSinkOptions {
  name: string;
  url: string;
  /** The CloudEvents `source`: a URI-reference identifying this Raven, e.g. `/raven/prod-eu`. */
  source: string;
  /** Replaces `io.k8s.raven` at the start of `type`. */
  typePrefix?: string;
  /** Extra headers (e.g. `authorization`). */
  headers?: Record<string, string>;
  /** Default 10 000 ms. */
  timeoutMs?: number;
  dispatcher?: Dispatcher;
  clock?: Clock;
}

/** A CloudEvent in the JSON event format, with a change event as data. */
export interface RavenCloudEvent {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  subject: string;
  time: string;
  datacontenttype: 'application/json';
  ravenwatcher: string;
  /** Change events only: how Raven learned of the change. */
  ravenorigin?: string;
  data: SinkRecord;
}

/**
 * @example
 * cloudEventType(event); // => 'io.k8s.raven.deployments.apps.modified'
 */
export function cloudEventType(
  event: Pick<SinkRecord, 'resource' | 'type'>,
  prefix = 'io.k8s.raven',
): string {
  const { resource, group } = event.resource;
  return `${prefix}.${group === '' ? resource : `${resource}.${group}`}.${event.type}`;
}

/** The structured-mode body for one event or gap notice. */
export function toCloudEvent(record: SinkRecord, source: string, prefix?: string): RavenCloudEvent {
  return {
    specversion: '1.0',
    id: record.id,
    source,
    type: cloudEventType(record, prefix),
    subject: record.type === 'gap' ? record.watcher : eventObjectKey(record),
    time: record.time,
    datacontenttype: 'application/json',
    ravenwatcher: record.watcher,
    ...(record.type === 'gap' ? {} : { ravenorigin: record.origin }),
    data: record,
  };
}

export class CloudEventsSink implements Sink {
  readonly name: string;
  readonly #options: CloudEventsSinkOptions;
  readonly #pool: SinkPool;

  constructor(options: CloudEventsSinkOptions) {
    checkExtraHeaders(options.headers, `sinks.${options.name}`);
    if (options.source === '')
      throw new ConfigError('source must be a non-empty URI-reference, e.g. /raven/prod', {
        path: `sinks.${options.name}.source`,
      });
    checkUrl(options.url, `sinks.${options.name}.url`);
    this.name = options.name;
    this.#options = options;
    this.#pool = new SinkPool(options.dispatcher);
  }

  async deliver(record: SinkRecord, signal: AbortSignal): Promise<void> {
    const body = JSON.stringify(toCloudEvent(record, this.#options.source, this.#options.typePrefix));
    await httpPost({
      label: `cloudevents sink "${this.name}"`,
      url: this.#options.url,
      body,
      headers: {
        ...this.#options.headers,
        'content-type': 'application/cloudevents+json; charset=utf-8',
      },
      timeoutMs: this.#options.timeoutMs ?? 10_000,
      signal,
      ...(this.#options.clock === undefined ? {} : { clock: this.#options.clock }),
      dispatcher: this.#pool.dispatcher,
    });
  }

  /** Close the sink's own connections (a given dispatcher is left open). */
  async close(): Promise<void> {
    await this.#pool.close();
  }
}
