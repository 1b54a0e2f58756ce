/**
 * The configuration `raven run` uses when given no file: the common workload resources in every
 * namespace except `kube-*`, printed to stdout.
 *
 * Decisions, and why:
 * - Checkpoints in memory: a state file in whatever directory raven happens to be started from
 *   would litter it (and fail in a read-only container). The cost: changes made while raven is
 *   stopped are not reported. Write a config with `checkpoint: { path: ... }` to keep them.
 * - Status-only changes are dropped for deployments, statefulsets, daemonsets and cronjobs: their
 *   status mostly summarises their pods (which are watched) or the jobs they start (also watched),
 *   and would double the output. Pods, jobs and services keep them: a pod's phase and restarts, a
 *   job's completion and a load balancer's address are the news.
 * - `initial: none`: starting raven does not print every existing object.
 * - The health server listens on 127.0.0.1:9479, as it does by default with a file.
 */
import { finalizeConfig } from './finalize-config.js';
import { ravenConfigSchema, type RavenConfig } from './raven-config-schema.js';

const WORKLOADS: readonly { name: string; resource: string; statusNews: boolean }[] = [
  { name: 'deployments', resource: 'deployments.apps', statusNews: false },
  { name: 'statefulsets', resource: 'statefulsets.apps', statusNews: false },
  { name: 'daemonsets', resource: 'daemonsets.apps', statusNews: false },
  { name: 'pods', resource: 'pods', statusNews: true },
  { name: 'services', resource: 'services', statusNews: true },
  { name: 'jobs', resource: 'jobs.batch', statusNews: true },
  { name: 'cronjobs', resource: 'cronjobs.batch', statusNews: false },
];

/** The namespaces left out by default: the control plane's own. */
export const DEFAULT_EXCLUDED_NAMESPACES = ['!kube-*'] as const;

/**
 * A fresh copy of the built-in configuration.
 *
 * @example
 * const config = defaultRavenConfig({ identity: 'raven-0' });
 * config.watchers.map((w) => w.name); // => ['deployments', 'statefulsets', ...]
 */
export function defaultRavenConfig(
  options: { identity?: string; baseDir?: string; homeDir?: string } = {},
): RavenConfig {
  const parsed = ravenConfigSchema.parse({
    checkpoint: { type: 'memory' },
    watchers: WORKLOADS.map(({ name, resource, statusNews }) => ({
      name,
      resource,
      namespaces: [...DEFAULT_EXCLUDED_NAMESPACES],
      predicates: { ignoreStatusOnly: !statusNews },
    })),
    sinks: [{ name: 'console', type: 'stdout' }],
    routes: [{ watchers: '*', sinks: 'console' }],
  });
  return finalizeConfig(parsed, {
    baseDir: options.baseDir ?? process.cwd(),
    homeDir: options.homeDir ?? process.env.HOME ?? '',
    identity: options.identity ?? 'raven',
  });
}
