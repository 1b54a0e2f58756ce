/**
 * The callback style, for those who prefer it to `for await`: one handler per event type, called
 * with the event's fields rather than the event (`added(object)`, `modified(object, previous)`,
 * `deleted(object, tombstone)`, ...), as client-go's handler functions are: the handler for a type
 * needs no `event.type` check, and its arguments are typed for that type. A handler that throws or
 * rejects does not stop the stream; the error goes to `onHandlerError`, else to `logger`, else
 * to stderr (never nowhere: a mistake in the handler is the caller's bug, and must be seen), and
 * the next event is delivered.
 */
import type { Logger } from '../util/logger.js';
import { stderrLogger } from '../util/logger.js';
import type { KubeObject, WatcherEvent, WatcherStatus } from './watcher-events.js';

/** One handler per event type; each gets the event's fields, not the event. */
export interface WatchHandlers<T extends KubeObject = KubeObject> {
  /** A list (or relist) begins. */
  listing?: (relist: boolean) => void | Promise<void>;
  /** An object of the initial list (before the first `synced`). */
  initial?: (object: T) => void | Promise<void>;
  synced?: (resourceVersion: string, relist: boolean) => void | Promise<void>;
  /** The object as created. */
  added?: (object: T) => void | Promise<void>;
  /** The new state, and the last state delivered before it (undefined if none was). */
  modified?: (object: T, previous: T | undefined) => void | Promise<void>;
  /** The final state; `tombstone`: inferred by a relist, so `object` is the last state known. */
  deleted?: (object: T, tombstone: boolean) => void | Promise<void>;
  bookmark?: (resourceVersion: string) => void | Promise<void>;
  /** The watcher failed and is retrying; `status` says how (phase, attempts). */
  error?: (error: Error, status: WatcherStatus) => void | Promise<void>;
  /** Called when a handler throws or rejects; the stream goes on. Default: `logger.error`. */
  onHandlerError?: (error: unknown, event: WatcherEvent<T>) => void;
  /** Where a failed handler is reported when there is no `onHandlerError`; default: stderr. */
  logger?: Logger;
}

/**
 * Deliver every event of `source` to `handlers`, one at a time, awaiting each handler.
 * Resolves when the source ends (it is aborted or closed).
 *
 * @example
 * await onEvents(watch({ transport: client, path: '/api/v1/pods' }), {
 *   added: (pod) => console.log('added', pod.metadata?.name),
 *   deleted: (pod, tombstone) => console.log('deleted', pod.metadata?.name, tombstone ? '(inferred)' : ''),
 * });
 */
export async function onEvents<T extends KubeObject>(
  source: AsyncIterable<WatcherEvent<T>>,
  handlers: WatchHandlers<T>,
): Promise<void> {
  const logger = handlers.logger ?? stderrLogger;
  const report =
    handlers.onHandlerError ??
    ((error: unknown, event: WatcherEvent<T>) => {
      logger.error({ err: error, event: event.type }, `the ${event.type} handler failed; the watch goes on`);
    });
  for await (const event of source) {
    try {
      await dispatch(event, handlers);
    } catch (error) {
      report(error, event);
    }
  }
}

async function dispatch<T extends KubeObject>(event: WatcherEvent<T>, h: WatchHandlers<T>): Promise<void> {
  switch (event.type) {
    case 'listing':
      return h.listing?.(event.relist);
    case 'initial':
      return h.initial?.(event.object);
    case 'synced':
      return h.synced?.(event.resourceVersion, event.relist);
    case 'added':
      return h.added?.(event.object);
    case 'modified':
      return h.modified?.(event.object, event.previous);
    case 'deleted':
      return h.deleted?.(event.object, event.tombstone);
    case 'bookmark':
      return h.bookmark?.(event.resourceVersion);
    case 'error':
      return h.error?.(event.error, event.status);
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}
