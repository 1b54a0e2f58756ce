import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiErrorFromResponse } from '../../../src/errors/api-error.js';
import { TransportError } from '../../../src/errors/raven-error.js';
import { stoppedStatus } from '../../../src/watch/watcher-events.js';
import {
  WatchFailures,
  type FailureVerdict,
  type WatchFailuresOptions,
} from '../../../src/cli/watch-failures.js';

/** What a verdict says: `end: <message>` or `go: <notice>` (`go: -` for a quiet one). */
function said(verdict: FailureVerdict): string {
  return verdict.end ? `end: ${verdict.message}` : `go: ${verdict.notice ?? '-'}`;
}

const status = { ...stoppedStatus(), phase: 'backoff' as const, failures: 1 };

function api(code: number, reason: string, message: string): Error {
  return apiErrorFromResponse(code, JSON.stringify({ kind: 'Status', code, reason, message }), {
    method: 'GET',
    path: '/api/v1/namespaces/shop/pods?watch=true',
  });
}

function failures(options: Partial<WatchFailuresOptions> = {}): WatchFailures {
  return new WatchFailures({
    waitForRbac: false,
    resource: 'widgets.example.com',
    stillServed: () => Promise.reject(new Error('discovery must not be asked')),
    ...options,
  });
}

test('a refused connection keeps the watch going without a notice per retry (the outage tracker reports it)', async () => {
  const verdict = await failures().judge(new TransportError('connect ECONNREFUSED 127.0.0.1:6443'), {
    ...status,
    failures: 3,
  });
  assert.deepEqual(verdict, { end: false, notice: undefined });
});

test('429, 5xx and 410 keep the watch going', async () => {
  const judge = failures();
  for (const [code, reason] of [
    [429, 'TooManyRequests'],
    [503, 'ServiceUnavailable'],
    [410, 'Expired'],
  ] as const) {
    const verdict = await judge.judge(api(code, reason, 'try later'), status);
    assert.equal(verdict.end, false, `${code} ${reason}`);
  }
});

test('a field selector the server rejects ends the watch with the server message', async () => {
  const error = api(400, 'BadRequest', 'field label not supported: spec.foo');
  const verdict = await failures().judge(error, status);
  assert.deepEqual(verdict, { end: true, message: error.message });
  assert.match(error.message, /^400 BadRequest: field label not supported: spec\.foo/);
});

test('a 401 ends the watch, saying the credentials were refused after refreshing them', async () => {
  const verdict = await failures().judge(api(401, 'Unauthorized', 'Unauthorized'), status);
  assert.match(said(verdict), /^end: 401 Unauthorized.*refused after refreshing them/);
});

test('a 403 ends the watch and names the flag that would wait for RBAC', async () => {
  const verdict = await failures().judge(api(403, 'Forbidden', 'secrets is forbidden'), status);
  assert.match(said(verdict), /^end: 403 Forbidden: secrets is forbidden.*--wait-for-rbac/);
});

test('with --wait-for-rbac a 403 is reported once until the watch makes progress, then once again', async () => {
  const judge = failures({ waitForRbac: true });
  const forbidden = api(403, 'Forbidden', 'secrets is forbidden');
  const notices = [];
  for (let i = 0; i < 3; i++) notices.push(await judge.judge(forbidden, status));
  judge.progressed();
  notices.push(await judge.judge(forbidden, status));
  assert.deepEqual(notices.map(said), [
    `go: ${forbidden.message}; waiting for access to be granted (--wait-for-rbac)`,
    'go: -',
    'go: -',
    `go: ${forbidden.message}; waiting for access to be granted (--wait-for-rbac)`,
  ]);
});

test('a 404 ends the watch when discovery no longer lists the resource', async () => {
  let asked = 0;
  const judge = failures({
    stillServed: () => {
      asked++;
      return Promise.resolve(false);
    },
  });
  const verdict = await judge.judge(
    api(404, 'NotFound', 'the server could not find the requested resource'),
    status,
  );
  assert.equal(asked, 1);
  assert.match(
    said(verdict),
    /^end: the server no longer serves widgets\.example\.com: 404 NotFound: the server could not find/,
  );
});

test('a 404 keeps the watch going while discovery still lists the resource, or cannot be asked', async () => {
  const notFound = api(404, 'NotFound', 'the server could not find the requested resource');
  const served = await failures({ stillServed: () => Promise.resolve(true) }).judge(notFound, status);
  assert.match(said(served), /^go: .*discovery still lists widgets\.example\.com; retrying/);
  const unreachable = await failures({
    stillServed: () => Promise.reject(new TransportError('connect ECONNREFUSED')),
  }).judge(notFound, status);
  assert.match(said(unreachable), /^go: .*asking discovery again failed \(connect ECONNREFUSED\); retrying/);
});
