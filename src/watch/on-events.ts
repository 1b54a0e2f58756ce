/**
 * The callback style, for those who prefer it to `for await`: one handler per event type. A handler
 * that throws or rejects does not stop the stream; the error goes to `onHandlerError` (default: the
 * logger) and the next event is delivered.
 */
import type { Logger } from '../util/logger.js';
import { silentLogger } from '../util/logger.js';
import type { KubeObject, WatcherEvent, WatcherStatus } from './watcher-events.js';

export interface WatchHandlers<T extends KubeObject = KubeObject> {
  listing?: (relist: boolean) => void | Promise<void>;
  initial?: (object: T) => void | Promise<void>;
  synced?: (resourceVersion: string, relist: boolean) => void | Promise<void>;
  added?: (object: T) => void | Promise<void>;
  modified?: (object: T, previous: T | undefined) => void | Promise<void>;
  deleted?: (object: T, tombstone: boolean) => void | Promise<void>;
  bookmark?: (resourceVersion: string) => void | Promise<void>;
  error?: (error: Error, status: WatcherStatus) => void | Promise<void>;
  /** Called when a handler throws; the stream goes on. */
  onHandlerError?: (error: unknown, event: WatcherEvent<T>) => void;
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
  const logger = handlers.logger ?? silentLogger;
  const report =
    handlers.onHandlerError ??
    ((error: unknown, event: WatcherEvent<T>) => {
      logger.error(
        { err: error instanceof Error ? error.message : String(error), event: event.type },
        'watch handler failed',
      );
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
