/**
 * The router's verdicts: which sinks a change is delivered to, which only record it in their
 * checkpoint (silent), and which handlers get it; from configs parsed as the daemon parses them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { KubeObject } from '../../../src/client/kube-object.js';
import type { ChangeType } from '../../../src/raven/model/change-event.js';
import { parseRavenConfig } from '../../../src/raven/config/load-raven-config.js';
import { ROUTER_VERDICT, type RouterVerdictMessage } from '../../../src/raven/model/diagnostics.js';
import { Router } from '../../../src/raven/routing/router.js';
import { toChangeEvent } from '../../../src/raven/model/to-change-event.js';

const PODS = { group: '', version: 'v1', resource: 'pods', kind: 'Pod' };

function router(yaml: string): Router {
  return new Router(
    parseRavenConfig(yaml, { baseDir: '/etc/raven', homeDir: '/home/me', env: {}, defaultIdentity: 'me' }),
  );
}

function pod(name: string, namespace: string, labels: Record<string, string> = {}, rv = '5'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels, resourceVersion: rv },
    spec: { nodeName: 'a' },
  } as KubeObject;
}

function change(watcher: string, type: ChangeType, object: KubeObject, previous?: KubeObject) {
  return toChangeEvent(
    { watcher, resource: PODS, time: '2026-01-01T00:00:00.000Z' },
    { type, object, previous, origin: 'live' },
  );
}

const TWO_WATCHERS = `
watchers:
  - { name: pods, resource: pods }
  - { name: quiet, resource: pods, events: [deleted] }
sinks:
  - { name: all, type: stdout }
  - { name: prod, type: stdout }
  - { name: unrouted, type: stdout }
routes:
  - { watchers: [pods, quiet], sinks: [all] }
  - watchers: pods
    sinks: [prod]
    match: [{ namespace: 'prod-*' }]
`;

test('a change goes to every sink a matching route names, and is silent for a sink it is routed from but not sent to', () => {
  const r = router(TWO_WATCHERS);
  const inProd = change('pods', 'added', pod('web', 'prod-eu'));
  const inDev = change('pods', 'added', pod('web', 'dev'));
  assert.equal(r.verdict(inProd, 'all'), 'deliver');
  assert.equal(r.verdict(inProd, 'prod'), 'deliver');
  assert.equal(r.verdict(inDev, 'all'), 'deliver');
  assert.equal(r.verdict(inDev, 'prod'), 'silent');
});

test('a sink no route of the watcher reaches is silent, and is not among its sinks', () => {
  const r = router(TWO_WATCHERS);
  assert.equal(r.verdict(change('pods', 'added', pod('web', 'prod-eu')), 'unrouted'), 'silent');
  assert.deepEqual(r.sinksOf('pods').sort(), ['all', 'prod']);
  assert.deepEqual(r.sinksOf('quiet'), ['all']);
  assert.deepEqual(r.watchersOf('prod'), ['pods']);
  assert.deepEqual(r.watchersOf('all').sort(), ['pods', 'quiet']);
  assert.deepEqual(r.watchersOf('unrouted'), []);
});

test("the watcher's own event types filter before the routes: a filtered change is silent", () => {
  const r = router(TWO_WATCHERS);
  assert.equal(r.verdict(change('quiet', 'added', pod('web', 'dev')), 'all'), 'silent');
  assert.equal(r.verdict(change('quiet', 'deleted', pod('web', 'dev')), 'all'), 'deliver');
});

test('a modification whose diff is only noise is silent; a real one is delivered', () => {
  const r = router(TWO_WATCHERS);
  const before = pod('web', 'dev', {}, '5');
  assert.equal(r.verdict(change('pods', 'modified', pod('web', 'dev', {}, '6'), before), 'all'), 'silent');
  assert.equal(
    r.verdict(change('pods', 'modified', pod('web', 'dev', { tier: 'api' }, '7'), before), 'all'),
    'deliver',
  );
});

test('predicates of the watcher apply to every sink alike', () => {
  const r = router(`
watchers:
  - { name: pods, resource: pods, predicates: { fields: [metadata.labels] } }
sinks:
  - { name: out, type: stdout }
`);
  const before = pod('web', 'dev');
  const relabelled = change('pods', 'modified', pod('web', 'dev', { tier: 'api' }, '6'), before);
  const moved = change('pods', 'modified', { ...before, spec: { nodeName: 'b' } } as KubeObject, before);
  assert.equal(r.verdict(relabelled, 'out'), 'deliver');
  assert.equal(r.verdict(moved, 'out'), 'silent');
});

test("handlers get a change of the watchers and event types they name, once the watcher's filter passes", () => {
  const r = router(`
watchers:
  - { name: pods, resource: pods }
  - { name: other, resource: pods }
sinks:
  - { name: out, type: stdout }
handlers:
  - { name: adds, module: ./h.mjs, watchers: [pods], events: [added] }
  - { name: every, module: ./h.mjs }
`);
  assert.deepEqual(r.handlersFor(change('pods', 'added', pod('web', 'dev'))), ['adds', 'every']);
  assert.deepEqual(r.handlersFor(change('pods', 'deleted', pod('web', 'dev'))), ['every']);
  assert.deepEqual(r.handlersFor(change('other', 'added', pod('web', 'dev'))), ['every']);
  const noise = change('pods', 'modified', pod('web', 'dev', {}, '6'), pod('web', 'dev'));
  assert.deepEqual(r.handlersFor(noise), []);
});

test('each verdict is published on raven:router:verdict', () => {
  const seen: RouterVerdictMessage[] = [];
  const listener = (message: unknown): void => {
    seen.push(message as RouterVerdictMessage);
  };
  subscribe(ROUTER_VERDICT, listener);
  try {
    const r = router(TWO_WATCHERS);
    const event = change('pods', 'added', pod('web', 'dev'));
    r.verdict(event, 'all');
    r.verdict(event, 'prod');
  } finally {
    unsubscribe(ROUTER_VERDICT, listener);
  }
  assert.deepEqual(
    seen.map((m) => [m.sink, m.verdict, m.event.name]),
    [
      ['all', 'deliver', 'web'],
      ['prod', 'silent', 'web'],
    ],
  );
});
