/**
 * `npm run openstack -- <command>`: the local OpenStack lab (Neutron + Octavia on loopback) for
 * trying Raven's translator and for tests.
 *
 *   up       start RabbitMQ, neutron-server, octavia-api and octavia-worker on free loopback ports
 *   down     stop everything `up` started (epmd included)
 *   status   say what runs, where, and how much memory it holds
 *   env      print the lab's URLs and project id as `export` lines for use with eval
 *
 * State lives in $RAVEN_OPENSTACK_DIR (default: .cache/openstack in the repository). Tests run with
 * RAVEN_TEST_OPENSTACK_DIR set to it attach to this lab instead of starting their own.
 */
import { join } from 'node:path';
import { repoRoot } from '../test/harness/binaries.js';
import { OpenStackLab } from '../test/harness/openstack/lab.js';

const dir = process.env.RAVEN_OPENSTACK_DIR ?? join(repoRoot, '.cache', 'openstack');
const log = (line: string): void => {
  process.stderr.write(`openstack: ${line}\n`);
};
const mb = (bytes: number): string => `${Math.round(bytes / 2 ** 20)} MB`;

function envLines(lab: OpenStackLab): string {
  return [
    `export RAVEN_TEST_OPENSTACK_DIR=${lab.state.dir}`,
    `export OPENSTACK_NEUTRON_URL=${lab.neutronUrl}`,
    `export OPENSTACK_OCTAVIA_URL=${lab.octaviaUrl}`,
    `export OPENSTACK_PROJECT_ID=${lab.projectId}`,
    '',
  ].join('\n');
}

async function main(command: string | undefined): Promise<number> {
  switch (command) {
    case 'up': {
      if (OpenStackLab.exists(dir)) {
        const lab = await OpenStackLab.attach(dir);
        if (lab.status().running) {
          log(`already running: neutron ${lab.neutronUrl}, octavia ${lab.octaviaUrl}`);
          process.stdout.write(envLines(lab));
          return 0;
        }
      }
      const lab = await OpenStackLab.start(dir, log);
      log(`neutron ${lab.neutronUrl}, octavia ${lab.octaviaUrl}, project ${lab.projectId}`);
      log(`memory: ${mb(lab.status().rssBytes)} resident, ${mb(lab.status().pssBytes)} proportional`);
      process.stdout.write(envLines(lab));
      return 0;
    }
    case 'down': {
      if (!OpenStackLab.exists(dir)) {
        log('not running');
        return 0;
      }
      await (await OpenStackLab.attach(dir)).stop();
      log('stopped');
      return 0;
    }
    case 'status': {
      if (!OpenStackLab.exists(dir)) {
        log('not running');
        return 1;
      }
      const lab = await OpenStackLab.attach(dir);
      const status = lab.status();
      for (const [name, s] of Object.entries(status.services))
        log(
          `${name}: ${s.running ? `running (pids ${s.pids.join(' ')}, ${mb(s.rssBytes)} resident)` : 'stopped'}`,
        );
      log(`neutron ${lab.neutronUrl}, octavia ${lab.octaviaUrl}, project ${lab.projectId}`);
      log(
        `memory: ${mb(status.rssBytes)} resident, ${mb(status.pssBytes)} proportional; logs in ${join(dir, 'logs')}`,
      );
      return status.running ? 0 : 1;
    }
    case 'env': {
      if (!OpenStackLab.exists(dir) || !(await OpenStackLab.attach(dir)).status().running) {
        log('not running; start it with: npm run openstack -- up');
        return 1;
      }
      process.stdout.write(envLines(await OpenStackLab.attach(dir)));
      return 0;
    }
    default:
      process.stderr.write('usage: npm run openstack -- up|down|status|env\n');
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
