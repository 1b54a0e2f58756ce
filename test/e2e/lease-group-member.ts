/**
 * One member of a lease group, for test/e2e/lease-group.e2e.test.ts: joins the group named on the
 * command line and prints each view of the members as a JSON line on stdout; SIGTERM leaves the
 * group (its Lease deleted) and exits 0.
 *
 *   tsx test/e2e/lease-group-member.ts --identity ID --kubeconfig FILE --namespace NS --group NAME
 *     [--lease-duration-ms N --renew-deadline-ms N --retry-period-ms N]
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/client/load-config.js';
import { KubeClient } from '../../src/client/kube-client.js';
import { LeaseGroup } from '../../src/controller/lease-group.js';

const { values } = parseArgs({
  options: {
    identity: { type: 'string' },
    kubeconfig: { type: 'string' },
    namespace: { type: 'string' },
    group: { type: 'string' },
    'lease-duration-ms': { type: 'string' },
    'renew-deadline-ms': { type: 'string' },
    'retry-period-ms': { type: 'string' },
  },
});
const print = (line: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(line)}\n`);
};
const client = new KubeClient(await loadConfig({ kubeconfig: values.kubeconfig }));
const group = new LeaseGroup({
  client,
  namespace: values.namespace ?? 'default',
  group: values.group ?? 'raven',
  identity: values.identity ?? 'member',
  ...(values['lease-duration-ms'] === undefined
    ? {}
    : { leaseDurationMs: Number(values['lease-duration-ms']) }),
  ...(values['renew-deadline-ms'] === undefined
    ? {}
    : { renewDeadlineMs: Number(values['renew-deadline-ms']) }),
  ...(values['retry-period-ms'] === undefined ? {} : { retryPeriodMs: Number(values['retry-period-ms']) }),
  onChange: (members) => print({ msg: 'members', members: [...members] }),
});
const controller = new AbortController();
process.once('SIGTERM', () => controller.abort());
print({ msg: 'joining', lease: group.leaseName });
await group.run(controller.signal);
print({ msg: 'left' });
await client.destroy();
