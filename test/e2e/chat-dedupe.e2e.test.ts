/**
 * The chat sink's dedupe as a user meets it: `raven run -c examples/configs/chat-alerts.yaml`
 * against the real apiserver, its Slack URL pointing at a local receiver. The example's template
 * renders every modification of a Deployment as the same text (`modified Deployment prod/web (by
 * watcher deployments)`), so two distinct image changes read alike; each must still be posted.
 * Only an identical message (same text, type and diff: the object deleted again after it was
 * recreated) is folded into "the same message 1 more time".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { HttpReceiver } from '../harness/http-receiver.js';
import { sharedCluster } from '../harness/test-cluster.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { exampleArgs, ok, startRaven, tempDir, until, waitReady } from './daemon-process.js';

function deployment(name: string, image: string): unknown {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image }] } },
    },
  };
}

/** Each line of text of every Slack post (a batch's messages are joined by newlines). */
function postedLines(slack: HttpReceiver): string[] {
  return slack.requests
    .filter((r) => r.path === '/slack')
    .flatMap((r) => ((r.json as { text?: string }).text ?? '').split('\n'));
}

async function setImage(plane: ControlPlane, path: string, image: string): Promise<void> {
  await ok(
    plane.adminRequest(
      'PATCH',
      path,
      { spec: { template: { spec: { containers: [{ name: 'web', image }] } } } },
      'application/strategic-merge-patch+json',
    ),
  );
}

test('chat-alerts.yaml posts each distinct image change to Slack and folds only an identical message', async (t) => {
  const plane = await sharedCluster();
  // The example watches the namespaces prod and staging; the Deployment's name is this run's own.
  const created = await plane.adminRequest('POST', '/api/v1/namespaces', { metadata: { name: 'prod' } });
  assert.ok(created.status === 201 || created.status === 409, created.body);
  const name = `dedupe-${process.pid}`;
  const collection = '/apis/apps/v1/namespaces/prod/deployments';
  const path = `${collection}/${name}`;
  t.after(() => plane.adminRequest('DELETE', path));
  const slack = await HttpReceiver.start();
  t.after(() => slack.close());
  const dir = await tempDir(t);
  const raven = startRaven(
    [...exampleArgs('run', 'chat-alerts.yaml', plane.kubeconfig), '--port', '0', '--log-level', 'info'],
    {
      env: {
        SLACK_WEBHOOK_URL: slack.url('/slack'),
        TEAMS_WEBHOOK_URL: slack.url('/teams'),
        XDG_STATE_HOME: dir,
      },
    },
  );
  t.after(() => raven.kill('SIGKILL'));
  await waitReady(raven);

  const headline = (type: string): string => `${type} Deployment prod/${name} (by watcher deployments)`;
  const mine = (): string[] => postedLines(slack).filter((l) => l.includes(`prod/${name}`));
  const show = (): string => `slack:\n${mine().join('\n')}\nstdout:\n${raven.stdout.join('\n')}`;
  const printed = (what: RegExp): boolean => raven.stdout.some((l) => what.test(l));
  const count = (line: string): number => mine().filter((l) => l === line).length;

  await ok(plane.adminRequest('POST', collection, deployment(name, 'nginx:1.26')));
  await until('the deployment is printed', () => printed(new RegExp(`added Deployment prod/${name}$`)), {
    show,
  });
  await setImage(plane, path, 'nginx:1.27');
  await until('the first image change is posted', () => count(headline('modified')) === 1, { show });
  await setImage(plane, path, 'nginx:1.28');
  await until('the second image change is posted', () => count(headline('modified')) === 2, { show });
  await ok(plane.adminRequest('DELETE', path));
  await until('the deletion is posted', () => count(headline('deleted')) === 1, { show });
  // Recreated (its `added` is not routed to Slack) and deleted again: the same message as the last one.
  await ok(plane.adminRequest('POST', collection, deployment(name, 'nginx:1.28')));
  await until(
    'the recreation is printed',
    () => raven.stdout.filter((l) => l.endsWith(`added Deployment prod/${name}`)).length === 2,
    { show },
  );
  await ok(plane.adminRequest('DELETE', path));
  const folded = `Deployment prod/${name}: the same message 1 more time`;
  await until('the second deletion is counted as a repeat', () => count(folded) === 1, { show });

  // Every distinct change was posted once, and nothing else about the Deployment was folded.
  assert.deepEqual(mine(), [headline('modified'), headline('modified'), headline('deleted'), folded], show());
  raven.kill('SIGINT');
  const exit = await raven.exited;
  assert.equal(exit.code, 0, raven.stderr());
});
