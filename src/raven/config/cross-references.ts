/**
 * Checks that need the whole file: names are unique, and routes and handlers name watchers and
 * sinks that exist. They read the raw data defensively (anything malformed is the schema's to
 * report), so they run in the same pass as the schema and every problem shows at once.
 */
import type { ConfigPath } from '../../errors/config-path.js';
import { didYouMean } from '../../util/did-you-mean.js';

/** A problem at a path. */
export interface Finding {
  path: ConfigPath;
  message: string;
}

interface Named {
  name: string;
  index: number;
}

function list(data: unknown, key: string): unknown[] {
  const value =
    typeof data === 'object' && data !== null ? (data as Record<string, unknown>)[key] : undefined;
  return Array.isArray(value) ? value : [];
}

function field(item: unknown, key: string): unknown {
  return typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[key] : undefined;
}

function namesOf(data: unknown, key: string): Named[] {
  return list(data, key).flatMap((item, index) => {
    const name = field(item, 'name');
    return typeof name === 'string' ? [{ name, index }] : [];
  });
}

function duplicates(section: string, named: Named[], findings: Finding[]): void {
  const first = new Map<string, number>();
  for (const { name, index } of named) {
    const earlier = first.get(name);
    if (earlier === undefined) first.set(name, index);
    else
      findings.push({
        path: [section, index, 'name'],
        message: `duplicate name ${JSON.stringify(name)}, already used by ${section}[${earlier}]; names must be unique`,
      });
  }
}

/** Entries of a `watchers:`/`sinks:` reference (one name or a list), with their paths. */
function references(value: unknown, path: ConfigPath): { name: string; path: ConfigPath }[] {
  if (typeof value === 'string') return [{ name: value, path }];
  if (!Array.isArray(value)) return [];
  return value.flatMap((name, i) => (typeof name === 'string' ? [{ name, path: [...path, i] }] : []));
}

function checkReferences(
  value: unknown,
  path: ConfigPath,
  kind: 'watcher' | 'sink',
  defined: readonly string[],
  findings: Finding[],
  handlers: readonly string[] = [],
): void {
  for (const ref of references(value, path)) {
    if (ref.name === '*' || defined.includes(ref.name)) continue;
    const known =
      defined.length === 0 ? `no ${kind}s are defined` : `defined ${kind}s: ${defined.join(', ')}`;
    const handler = handlers.includes(ref.name)
      ? `; ${JSON.stringify(ref.name)} is a handler, and handlers choose their watchers in handlers[].watchers`
      : '';
    findings.push({
      path: ref.path,
      message: `unknown ${kind} ${JSON.stringify(ref.name)}${didYouMean(ref.name, defined)}; ${known}, or "*" for all${handler}`,
    });
  }
}

/** Problems that make the file invalid. */
export function crossReferenceProblems(data: unknown): Finding[] {
  const findings: Finding[] = [];
  const watchers = namesOf(data, 'watchers');
  const sinks = namesOf(data, 'sinks');
  const handlers = namesOf(data, 'handlers');
  duplicates('watchers', watchers, findings);
  duplicates('sinks', sinks, findings);
  duplicates('handlers', handlers, findings);
  for (const handler of handlers) {
    const sink = sinks.find((s) => s.name === handler.name);
    if (sink === undefined) continue;
    findings.push({
      path: ['handlers', handler.index, 'name'],
      message: `${JSON.stringify(handler.name)} is already the name of sinks[${sink.index}]; sinks and handlers share names (checkpoints and metrics are keyed by them)`,
    });
  }
  const watcherNames = [...new Set(watchers.map((w) => w.name))];
  const sinkNames = [...new Set(sinks.map((s) => s.name))];
  const handlerNames = handlers.map((h) => h.name);
  const checkRoutes = (routes: unknown[], path: ConfigPath): void =>
    routes.forEach((route, i) => {
      checkReferences(field(route, 'watchers'), [...path, i, 'watchers'], 'watcher', watcherNames, findings);
      checkReferences(
        field(route, 'sinks'),
        [...path, i, 'sinks'],
        'sink',
        sinkNames,
        findings,
        handlerNames,
      );
      checkRoutes(list(route, 'routes'), [...path, i, 'routes']);
    });
  checkRoutes(list(data, 'routes'), ['routes']);
  list(data, 'handlers').forEach((handler, i) => {
    checkReferences(
      field(handler, 'watchers'),
      ['handlers', i, 'watchers'],
      'watcher',
      watcherNames,
      findings,
    );
  });
  if (list(data, 'watchers').length === 0 && list(data, 'translators').length === 0) {
    findings.push({
      path: ['watchers'],
      message: `${field(data, 'watchers') === undefined ? 'missing' : 'empty'}; expected a non-empty list of watchers (or a translator)`,
    });
  }
  if (list(data, 'watchers').length > 0 && sinks.length === 0 && handlers.length === 0) {
    findings.push({
      path: ['sinks'],
      message:
        'no sinks and no handlers: events would go nowhere; add a sink such as { name: console, type: stdout }',
    });
  }
  shardingProblems(data, findings);
  return findings;
}

/** Sharding needs a checkpoint the replicas share, and excludes what only one replica may run. */
function shardingProblems(data: unknown, findings: Finding[]): void {
  if (field(field(data, 'sharding'), 'enabled') !== true) return;
  const checkpoint = field(field(data, 'checkpoint'), 'type');
  if (checkpoint !== 'postgres')
    findings.push({
      path: ['checkpoint', 'type'],
      message: `${checkpoint === undefined ? 'missing' : JSON.stringify(checkpoint)}: sharding.enabled needs the checkpoint the replicas share, type postgres`,
    });
  if (field(field(data, 'leaderElection'), 'enabled') === true)
    findings.push({
      path: ['leaderElection', 'enabled'],
      message:
        'true with sharding.enabled: choose one; sharded replicas each own a part of the objects, leader election makes one replica do everything',
    });
  if (list(data, 'translators').length > 0)
    findings.push({
      path: ['translators'],
      message:
        'not with sharding.enabled: a translator needs every object of its cluster; run it in a deployment of its own (with leader election)',
    });
}
