/**
 * Things that are valid but probably not meant: a sink no route feeds, a watcher whose events go
 * nowhere, a route that filters for events its watcher never emits. `raven check` prints them;
 * `raven run` logs them.
 */
import type { ConfigPath } from '../../errors/config-path.js';
import type { RavenConfig } from './raven-config-schema.js';
import { flattenRoutes } from './route-schema.js';

export interface ConfigWarning {
  path: ConfigPath;
  message: string;
}

export function configWarnings(config: RavenConfig): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  const routes = flattenRoutes(config.routes);
  config.sinks.forEach((sink, i) => {
    if (routes.some(({ route }) => route.sinks.includes(sink.name))) return;
    warnings.push({
      path: ['sinks', i],
      message: `sink ${JSON.stringify(sink.name)} is in no route, so it receives nothing`,
    });
  });
  config.watchers.forEach((watcher, i) => {
    const routed = routes.some(({ route }) => route.watchers.includes(watcher.name));
    const handled = config.handlers.some((handler) => handler.watchers.includes(watcher.name));
    if (routed || handled) return;
    warnings.push({
      path: ['watchers', i],
      message: `watcher ${JSON.stringify(watcher.name)} is in no route and feeds no handler, so its events go nowhere`,
    });
  });
  routes.forEach(({ route, path }) => {
    for (const name of route.watchers) {
      const watcher = config.watchers.find((w) => w.name === name);
      if (watcher === undefined || route.events.some((type) => watcher.events.includes(type))) continue;
      warnings.push({
        path: [...path, 'events'],
        message: `watcher ${JSON.stringify(name)} emits only ${watcher.events.join(', ')}, none of which this route passes`,
      });
    }
  });
  return warnings;
}
