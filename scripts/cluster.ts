/**
 * `npm run cluster -- <command>`: the local Kubernetes control plane for trying Raven and for tests.
 *
 *   build    build (or find cached) kube-apiserver, kube-controller-manager and etcd, and the
 *            helm and kustomize the deployment tests render deploy/ with
 *   up       start etcd + apiserver + controller-manager on loopback and write a kubeconfig
 *   down     stop everything `up` started
 *   status   say whether it runs, where, and the kubeconfig path
 *   env      print `export KUBECONFIG=...` for use with eval
 *
 * State lives in $RAVEN_CLUSTER_DIR (default: .cache/cluster in the repository).
 */
import { dirname, join } from 'node:path';
import { ensureBinaries, repoRoot } from '../test/harness/binaries.js';
import { ControlPlane } from '../test/harness/control-plane.js';
import { ensureDeployTools } from '../test/harness/deploy-tools.js';

const dir = process.env.RAVEN_CLUSTER_DIR ?? join(repoRoot, '.cache', 'cluster');
const log = (line: string): void => {
  process.stderr.write(`cluster: ${line}\n`);
};

async function main(command: string | undefined): Promise<number> {
  switch (command) {
    case 'build': {
      // One after the other: a Go build keeps 2 cores busy on its own (measured with nothing in
      // Go's caches: the control plane, helm/kustomize and Loki at the same time took 1,660 s;
      // one after the other 1,587 s, helm and kustomize then built optimised).
      const bins = await ensureBinaries(log);
      log(`binaries for ${bins.kubernetesVersion} in ${bins.dir}`);
      const tools = await ensureDeployTools(log);
      log(`helm ${tools.helmVersion} and kustomize in ${dirname(tools.helm)}`);
      return 0;
    }
    case 'up': {
      if (ControlPlane.exists(dir)) {
        const plane = await ControlPlane.attach(dir);
        if (Object.values(plane.running()).every(Boolean)) {
          log(`already running: ${plane.server}`);
          process.stdout.write(`KUBECONFIG=${plane.kubeconfig}\n`);
          return 0;
        }
        await plane.stop();
      }
      const started = Date.now();
      const plane = await ControlPlane.start(dir, await ensureBinaries(log), log);
      log(
        `ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${plane.server} (Kubernetes ${plane.state.kubernetesVersion})`,
      );
      process.stdout.write(`KUBECONFIG=${plane.kubeconfig}\n`);
      return 0;
    }
    case 'down': {
      if (!ControlPlane.exists(dir)) {
        log('not running');
        return 0;
      }
      await (await ControlPlane.attach(dir)).stop();
      log('stopped');
      return 0;
    }
    case 'status': {
      if (!ControlPlane.exists(dir)) {
        log('not running');
        return 1;
      }
      const plane = await ControlPlane.attach(dir);
      const running = plane.running();
      for (const [name, up] of Object.entries(running)) log(`${name}: ${up ? 'running' : 'stopped'}`);
      log(`server ${plane.server}, kubeconfig ${plane.kubeconfig}, logs in ${join(dir, 'logs')}`);
      return Object.values(running).every(Boolean) ? 0 : 1;
    }
    case 'env': {
      if (!ControlPlane.exists(dir)) {
        log('not running; start it with: npm run cluster -- up');
        return 1;
      }
      process.stdout.write(`export KUBECONFIG=${(await ControlPlane.attach(dir)).kubeconfig}\n`);
      return 0;
    }
    default:
      process.stderr.write('usage: npm run cluster -- build|up|down|status|env\n');
      return 2;
  }
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(err instanceof Error ? err.message : String(err));
    process.exit(1);
  },
);
