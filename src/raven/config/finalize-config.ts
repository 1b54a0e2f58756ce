/**
 * The last step of loading: what the schema cannot do because it needs the file's location or
 * the whole file. Relative paths become absolute (against the config file's directory, never the
 * working directory, so `raven run -c /etc/raven/raven.yaml` means the same from anywhere), `~`
 * becomes the home directory, `*` in routes and handlers becomes the names it stands for, and an
 * omitted `routes:` becomes one route from every watcher to every sink.
 */
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { CHANGE_TYPES } from './watcher-schema.js';
import type { RavenConfig, ravenConfigSchema } from './raven-config-schema.js';
import type { ParsedRoute, RouteConfig } from './route-schema.js';

export interface FinalizeOptions {
  /** Directory relative paths are resolved against. */
  baseDir: string;
  homeDir: string;
  /** Leader election and sharding identity when the file gives none. */
  identity: string;
}

/** A path as the daemon will open it. */
export function resolveConfigPath(
  path: string,
  options: Pick<FinalizeOptions, 'baseDir' | 'homeDir'>,
): string {
  if (path === '~') return options.homeDir;
  if (path.startsWith('~/')) return resolve(options.homeDir, path.slice(2));
  if (path.startsWith('file:')) return fileURLToPath(path);
  return isAbsolute(path) ? path : resolve(options.baseDir, path);
}

/** Module specifiers that are paths (resolved) rather than package names (left as they are). */
function isPathSpecifier(module: string): boolean {
  return /^(\.{1,2}(\/|$)|\/|~(\/|$)|file:)/.test(module) || isAbsolute(module);
}

function expand(names: readonly string[], all: readonly string[]): string[] {
  return names.includes('*') ? [...all] : [...new Set(names)];
}

export function finalizeConfig(
  parsed: z.output<typeof ravenConfigSchema>,
  options: FinalizeOptions,
): RavenConfig {
  const path = (p: string): string => resolveConfigPath(p, options);
  const watcherNames = parsed.watchers.map((w) => w.name);
  const sinkNames = parsed.sinks.map((s) => s.name);
  const routes =
    parsed.routes ??
    (sinkNames.length === 0
      ? []
      : [
          {
            watchers: ['*'],
            sinks: ['*'],
            events: [...CHANGE_TYPES],
            drop: [],
            match: [],
            select: 'all' as const,
            routes: [],
          },
        ]);
  const expandRoute = (route: ParsedRoute, inherited: string[]): RouteConfig => {
    const watchers = route.watchers === undefined ? inherited : expand(route.watchers, watcherNames);
    return {
      ...route,
      watchers,
      sinks: expand(route.sinks, sinkNames),
      routes: route.routes.map((child) => expandRoute(child, watchers)),
    };
  };
  return {
    ...parsed,
    kubeconfig: parsed.kubeconfig === undefined ? undefined : path(parsed.kubeconfig),
    checkpoint:
      parsed.checkpoint.type === 'sqlite'
        ? { ...parsed.checkpoint, path: path(parsed.checkpoint.path) }
        : parsed.checkpoint,
    leaderElection: {
      ...parsed.leaderElection,
      identity: parsed.leaderElection.identity ?? options.identity,
    },
    sharding: { ...parsed.sharding, identity: parsed.sharding.identity ?? options.identity },
    sinks: parsed.sinks.map((sink) => {
      const { deadLetterPath } = sink.delivery;
      const delivery =
        deadLetterPath === undefined
          ? sink.delivery
          : { ...sink.delivery, deadLetterPath: path(deadLetterPath) };
      if (sink.type === 'file') return { ...sink, delivery, path: path(sink.path) };
      if (
        (sink.type === 'syslog' || sink.type === 'email' || sink.type === 'loki') &&
        sink.caFile !== undefined
      )
        return { ...sink, delivery, caFile: path(sink.caFile) };
      return { ...sink, delivery };
    }),
    routes: routes.map((route) => expandRoute(route, watcherNames)),
    handlers: parsed.handlers.map((handler) => ({
      ...handler,
      module: isPathSpecifier(handler.module) ? path(handler.module) : handler.module,
      watchers: expand(handler.watchers, watcherNames),
    })),
  };
}
