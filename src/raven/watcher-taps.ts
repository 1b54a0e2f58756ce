/**
 * What the daemon hangs on each watcher's stream of events besides its sinks
 * (`pipeline/run-watcher.ts`): the log line at sync, the metrics, the web view and the custom
 * handlers. Each tap sees every event after the sinks took it, and only reads it.
 */
import type { KubeObject } from '../client/kube-object.js';
import { errorKind } from '../errors/classify.js';
import type { OutageReport } from '../watch/outage-tracker.js';
import type { Logger } from '../util/logger.js';
import type { HandlerRunner } from './handlers/custom-handler.js';
import type { RavenMetrics } from './metrics/metrics.js';
import type { ChangeEvent } from './model/change-event.js';
import type { WatcherTap } from './pipeline/run-watcher.js';
import type { Router } from './routing/router.js';

/** One line when the watcher has synced. */
export function logTap(log: Logger): WatcherTap {
  return (event) => {
    if (event.type === 'synced')
      log.info({ objects: event.objects.length, resumed: event.resumed }, 'synced');
  };
}

/**
 * Changes, relists and watch errors counted per watcher. Each failure is counted here; the
 * pipeline logs the outage (a line at its start, every 30 s, at its end), the watcher each failure
 * at debug.
 */
export function metricsTap(metrics: RavenMetrics, watcher: string): WatcherTap {
  return (event) => {
    if (event.type === 'change') metrics.events.inc({ watcher: event.event.watcher, type: event.event.type });
    else if (event.type === 'relisting') metrics.relists.inc({ watcher });
    else if (event.type === 'error') metrics.watchErrors.inc({ watcher, kind: errorKind(event.error) });
  };
}

/** What the web view takes of one watcher (`DaemonUi.source` in `daemon.ts`). */
export interface UiSource {
  publish(
    type: 'EXISTING' | 'ADDED' | 'MODIFIED' | 'DELETED' | 'GONE',
    object: KubeObject,
    previous?: KubeObject,
    changedBy?: ChangeEvent['changedBy'],
  ): void;
  /** One of an outage's few reports (a start, every 30 s, a heal), as the log has it. */
  outage(report: OutageReport): void;
}

/** The objects at sync, every change with who made it, and each outage's few reports, to the web view. */
export function uiTap(ui: UiSource): WatcherTap {
  return (event) => {
    if (event.type === 'synced') for (const object of event.objects) ui.publish('EXISTING', object);
    else if (event.type === 'change')
      ui.publish(uiType(event.event), event.event.object, event.event.previous, event.event.changedBy);
    else if (event.type === 'outage') ui.outage(event.report);
  };
}

/** Each change to the custom handlers its routes name. */
export function handlersTap(router: Router, handlers: ReadonlyMap<string, HandlerRunner>): WatcherTap {
  return (event) => {
    if (event.type !== 'change') return;
    for (const name of router.handlersFor(event.event)) handlers.get(name)?.push(event.event);
  };
}

/** How the web view names a change. */
function uiType(event: ChangeEvent): 'ADDED' | 'MODIFIED' | 'DELETED' | 'GONE' {
  if (event.type === 'added') return 'ADDED';
  if (event.type === 'modified') return 'MODIFIED';
  return event.tombstone ? 'GONE' : 'DELETED';
}
