/**
 * The OpenStack lab for end-to-end tests.
 *
 * {@link sharedLab} is the one lab of the test run: scripts/test.ts starts it when a selected test
 * needs it and exports RAVEN_TEST_OPENSTACK_DIR; a test file run on its own starts one of its own
 * (~16 s) and stops it when the process is about to exit. Tests share the lab, so each works in a
 * project of its own ({@link freshProject}) and deletes what it created.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenStackLab } from './lab.js';

let shared: Promise<OpenStackLab> | undefined;
let owned: { lab: OpenStackLab; dir: string } | undefined;

process.on('beforeExit', () => {
  if (owned === undefined) return;
  const { lab, dir } = owned;
  owned = undefined;
  // An async stop here keeps the process alive until it is done (beforeExit fires again after).
  void lab.stop().then(() => rm(dir, { recursive: true, force: true }));
});

process.on('exit', () => {
  // Last resort, when the process exits without emptying its event loop (process.exit, a signal).
  owned?.lab.killNow();
});

/** The OpenStack lab shared by every test of this run. */
export function sharedLab(): Promise<OpenStackLab> {
  shared ??= (async () => {
    const dir = process.env.RAVEN_TEST_OPENSTACK_DIR;
    if (dir !== undefined && OpenStackLab.exists(dir)) return OpenStackLab.attach(dir);
    const own = await mkdtemp(join(tmpdir(), 'raven-openstack-'));
    const lab = await OpenStackLab.start(own, (line) => process.stderr.write(`openstack lab: ${line}\n`));
    owned = { lab, dir: own };
    return lab;
  })();
  return shared;
}

/** A project id of the caller's own: noauth accepts any, and list filters by it keep tests apart. */
export function freshProject(): string {
  return randomBytes(16).toString('hex');
}
