/**
 * One run of one list+watch contestant, in its own process (started by suite.ts):
 *   run-one.ts <contestant> <kubeconfig> <namespace> <objects> <updates>
 * Time to synced, then `updates` ConfigMaps are patched (through Raven's client, for every
 * contestant alike) and the run ends when the contestant has seen them all.
 */
import { reportFailure, reportResult } from '../lib/child.js';
import { Meter } from '../lib/measure.js';
import { loadRaven, ravenClient } from '../lib/raven.js';
import { contestantNamed, type ListWatchTarget } from './contestants.js';

async function main(): Promise<void> {
  const [name = '', kubeconfig = '', namespace = '', objects = '', updates = ''] = process.argv.slice(2);
  const target: ListWatchTarget = { kubeconfig, namespace, objects: Number(objects) };
  const contestant = contestantNamed(name);
  const driver = await ravenClient(await loadRaven(), kubeconfig);
  await contestant.load();
  const meter = new Meter();
  const session = await contestant.start(target);
  const held = await session.synced;
  const syncedMs = meter.elapsed();
  // Spread over the namespace; cm-000000 .. are the bench's own (kube-root-ca.crt is not).
  const stride = Math.max(1, Math.floor((target.objects - 1) / Number(updates)));
  const names = new Set(
    Array.from({ length: Number(updates) }, (_, i) => `cm-${String(i * stride).padStart(6, '0')}`),
  );
  const arrived = session.updated(names);
  const patched = meter.elapsed();
  for (const cmName of names) {
    await driver.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${namespace}/configmaps/${cmName}`,
      contentType: 'application/merge-patch+json',
      body: { data: { touched: String(Date.now()) } },
    });
  }
  await arrived;
  const updatesMs = meter.elapsed() - patched;
  const measurement = meter.stop();
  const watchList = session.watchList();
  await session.stop();
  await driver.destroy();
  if (held < target.objects)
    throw new Error(`${name} held ${held} objects when synced, expected ${target.objects}`);
  reportResult({ ...measurement, syncedMs, updatesMs, held, watchList });
}

main().catch(reportFailure);
