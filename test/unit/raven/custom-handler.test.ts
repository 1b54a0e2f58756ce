import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isRavenError } from '../../../src/errors/is-raven-error.js';
import {
  HandlerRunner,
  handlerCache,
  loadHandler,
  type HandlerContext,
} from '../../../src/raven/handlers/custom-handler.js';
import { toChangeEvent } from '../../../src/raven/model/to-change-event.js';
import type { KubeObject } from '../../../src/client/kube-object.js';

const resource = { group: '', version: 'v1', resource: 'pods', kind: 'Pod' };
const event = (name: string) =>
  toChangeEvent(
    { watcher: 'pods', resource, time: '2026-01-01T00:00:00.000Z' },
    {
      type: 'deleted',
      object: { metadata: { name, namespace: 'shop', uid: name, resourceVersion: '1' } },
      origin: 'live',
    },
  );

function context(
  logs: { level: string; obj: object; msg?: string | undefined }[],
  objects: KubeObject[] = [],
): HandlerContext {
  const logger = {
    debug: (obj: object, msg?: string) => logs.push({ level: 'debug', obj, msg }),
    info: (obj: object, msg?: string) => logs.push({ level: 'info', obj, msg }),
    warn: (obj: object, msg?: string) => logs.push({ level: 'warn', obj, msg }),
    error: (obj: object, msg?: string) => logs.push({ level: 'error', obj, msg }),
    child: () => logger,
  };
  return {
    name: 'h',
    options: {},
    client: undefined as never,
    discovery: undefined as never,
    logger,
    cache: () => ({ get: () => undefined, list: () => objects }),
    signal: new AbortController().signal,
  };
}

test('the example handler module loads through its factory and handles deletions with the cache', async () => {
  const module = resolve(
    import.meta.dirname,
    '..',
    '..',
    '..',
    'examples',
    'handlers',
    'count-deletions.mjs',
  );
  const handler = await loadHandler(module, { warnAbove: 1 }, 'handlers[0].module');
  const logs: { level: string; obj: object; msg?: string | undefined }[] = [];
  const ctx = context(logs, [{ metadata: { name: 'other', namespace: 'shop' } }]);
  await handler.start?.(ctx);
  await handler.handle(event('a'), ctx);
  await handler.handle(event('b'), ctx);
  assert.deepEqual(
    logs.map((l) => `${l.level} ${l.msg ?? ''}`),
    ['info counting deletions', 'info deleted', 'warn deleted'],
  );
  assert.deepEqual(logs[2]?.obj, { namespace: 'shop', name: 'b', deletions: 2, left: 1, inferred: false });
});

test('a module without a handler is a config error naming the entry and what to export', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'raven-handler-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'bad.mjs');
  await writeFile(path, 'export const nothing = 1;\n');
  await assert.rejects(
    loadHandler(path, {}, 'handlers[2].module'),
    /handlers\[2\]\.module: handler module .* must export \(as default or `handler`\) an object with a handle\(event, context\) method/,
  );
  await assert.rejects(
    loadHandler(join(dir, 'missing.mjs'), {}, 'handlers[0].module'),
    /handlers\[0\]\.module: cannot load handler module/,
  );
});

test('a throwing handler is isolated: the error is reported and the next change is still handled', async () => {
  const seen: string[] = [];
  const errors: string[] = [];
  const runner = new HandlerRunner(
    'h',
    {
      handle: (e) => {
        seen.push(e.name);
        if (e.name === 'a') throw new Error('boom');
      },
    },
    context([]),
    (error, e) => errors.push(`${(error as Error).message} on ${e.name}`),
  );
  runner.push(event('a'));
  runner.push(event('b'));
  await runner.stop();
  assert.deepEqual(seen, ['a', 'b']);
  assert.deepEqual(errors, ['boom on a']);
});

test('context.cache reads a running watcher, and says why when there is none to read', () => {
  const objects = [{ metadata: { name: 'web', namespace: 'shop' } } as KubeObject];
  const running = new Map([
    [
      'pods',
      {
        get: (namespace: string | undefined, name: string) =>
          objects.find((o) => o.metadata?.namespace === namespace && o.metadata?.name === name),
        objects: () => objects,
      },
    ],
  ]);
  const configured = ['pods', 'services'];
  const view = handlerCache('h', 'pods', running, configured);
  assert.equal(view.get('shop', 'web'), objects[0]);
  assert.equal(view.get('shop', 'api'), undefined);
  assert.deepEqual(view.list(), objects);

  assert.throws(
    () => handlerCache('h', 'deploys', running, configured),
    (err: unknown) =>
      isRavenError(err, 'ERR_INVALID_ARGUMENT') &&
      err.message ===
        'handler h: context.cache("deploys"): no watcher has that name; the configured watchers are pods, services',
  );
  assert.throws(
    () => handlerCache('h', 'services', running, configured),
    (err: unknown) =>
      isRavenError(err, 'ERR_INVALID_STATE') &&
      err.message.startsWith('handler h: context.cache("services"): the watcher is not watching now'),
  );
  assert.throws(
    () => handlerCache('h', 'pods', new Map(), []),
    (err: unknown) => isRavenError(err, 'ERR_INVALID_ARGUMENT') && err.message.endsWith('are none'),
  );
});
