/**
 * helm and kustomize, built with Go from hack/deploytools/go.mod (pinned versions from the Go
 * module proxy, as the control plane is) and cached beside it. The chart in deploy/helm/raven and
 * the kustomizations in deploy/ are rendered with them in the tests.
 */
import { join } from 'node:path';
import { ensureGoBuild, repoRoot } from './binaries.js';

export interface DeployTools {
  helm: string;
  kustomize: string;
  /** The helm.sh/helm/v4 version they were built from. */
  helmVersion: string;
}

/** Return the cached helm and kustomize, building them first when missing (minutes on 2 cores). */
export async function ensureDeployTools(log: (line: string) => void = () => undefined): Promise<DeployTools> {
  const { dir, version } = await ensureGoBuild(
    {
      moduleDir: join(repoRoot, 'hack', 'deploytools'),
      cacheName: 'deploytools',
      packages: ['helm.sh/helm/v4/cmd/helm', 'sigs.k8s.io/kustomize/kustomize/v5'],
      version: (gomod) => /helm\.sh\/helm\/v4 (v[0-9.]+)/.exec(gomod)?.[1] ?? 'unknown',
      describe: 'helm and kustomize',
      // Each runs once or twice per test run; built unoptimised, they compile in 4 minutes
      // instead of 5 on 2 cores.
      unoptimised: true,
    },
    log,
  );
  return { helm: join(dir, 'helm'), kustomize: join(dir, 'kustomize'), helmVersion: version };
}
