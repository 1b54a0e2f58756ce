/**
 * Merging several kubeconfig files the way kubectl does for a KUBECONFIG path list: the first
 * file that defines a cluster, context or user of a given name wins, and `current-context` comes
 * from the first file that sets it. Later definitions of the same name are ignored, not merged.
 */
import type { KubeconfigFile, Named } from './kubeconfig-file.js';

/** The merged view; `files` lists the sources in precedence order. */
export interface MergedKubeconfig extends Omit<KubeconfigFile, 'file'> {
  files: string[];
}

/** Merge parsed files, highest precedence first. */
export function mergeKubeconfigs(files: readonly KubeconfigFile[]): MergedKubeconfig {
  const currentContext = files.find((f) => f.currentContext !== undefined)?.currentContext;
  return {
    files: files.map((f) => f.file),
    ...(currentContext === undefined ? {} : { currentContext }),
    clusters: firstWins(files.flatMap((f) => f.clusters)),
    contexts: firstWins(files.flatMap((f) => f.contexts)),
    users: firstWins(files.flatMap((f) => f.users)),
  };
}

function firstWins<T>(entries: readonly Named<T>[]): Named<T>[] {
  const seen = new Map<string, Named<T>>();
  for (const entry of entries) if (!seen.has(entry.name)) seen.set(entry.name, entry);
  return [...seen.values()];
}
