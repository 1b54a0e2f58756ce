import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiErrorFromResponse } from '../../../src/errors/api-error.js';
import { TransportError } from '../../../src/errors/raven-error.js';
import type { ResolvedConfig } from '../../../src/client/resolved-config.js';
import { RECHECK_MS, REFUSED_FOR_MS, ServerMoved } from '../../../src/cli/server-moved.js';

function refused(): Error {
  const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
  return new TransportError('GET /api/v1/pods?watch=true: connect ECONNREFUSED 127.0.0.1:6443', { cause });
}

/** A kubeconfig whose server the test changes, and a clock it moves. */
function setup(): {
  moved: ServerMoved;
  kubeconfig: { server: string; reads: number };
  time: { now: number };
} {
  const kubeconfig = { server: 'https://127.0.0.1:6443', reads: 0 };
  const time = { now: 0 };
  const moved = new ServerMoved({
    current: 'https://127.0.0.1:6443',
    reload: () => {
      kubeconfig.reads++;
      return Promise.resolve({ server: kubeconfig.server } as ResolvedConfig);
    },
    now: () => time.now,
  });
  return { moved, kubeconfig, time };
}

test('the kubeconfig is read again only after 5 s of refused connections, then at most every 5 s', async () => {
  const { moved, kubeconfig, time } = setup();
  for (; time.now < REFUSED_FOR_MS; time.now += 1000) assert.equal(await moved.failed(refused()), undefined);
  assert.equal(kubeconfig.reads, 0, 'not before 5 s');
  for (let i = 0; i < 10; i++, time.now += 1000) assert.equal(await moved.failed(refused()), undefined);
  assert.equal(
    kubeconfig.reads,
    Math.ceil(10_000 / RECHECK_MS),
    'once every 5 s, the same address each time',
  );
});

test('a kubeconfig naming another server is the answer', async () => {
  const { moved, kubeconfig, time } = setup();
  await moved.failed(refused());
  kubeconfig.server = 'https://127.0.0.1:41235';
  time.now = REFUSED_FOR_MS;
  assert.equal((await moved.failed(refused()))?.server, 'https://127.0.0.1:41235');
});

test('an answer from the server ends the streak: the 5 s start again', async () => {
  const { moved, kubeconfig, time } = setup();
  kubeconfig.server = 'https://127.0.0.1:41235';
  await moved.failed(refused());
  time.now = 4000;
  moved.answered();
  await moved.failed(refused());
  time.now = 8000;
  assert.equal(await moved.failed(refused()), undefined);
  assert.equal(kubeconfig.reads, 0);
});

test('failures that reached the server (a 503) never make it read the kubeconfig', async () => {
  const { moved, kubeconfig, time } = setup();
  const unavailable = apiErrorFromResponse(503, 'etcd is not ready');
  for (; time.now < 20_000; time.now += 1000) await moved.failed(unavailable);
  assert.equal(kubeconfig.reads, 0);
});

test('a kubeconfig that cannot be read at the moment is not an answer; the next check reads it again', async () => {
  const time = { now: 0 };
  let reads = 0;
  const moved = new ServerMoved({
    current: 'https://127.0.0.1:6443',
    reload: () => {
      reads++;
      return reads === 1
        ? Promise.reject(new Error('ENOENT'))
        : Promise.resolve({ server: 'https://127.0.0.1:41235' } as ResolvedConfig);
    },
    now: () => time.now,
  });
  await moved.failed(refused());
  time.now = REFUSED_FOR_MS;
  assert.equal(await moved.failed(refused()), undefined);
  time.now += RECHECK_MS;
  assert.equal((await moved.failed(refused()))?.server, 'https://127.0.0.1:41235');
});
