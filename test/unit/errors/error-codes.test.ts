import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ApiError } from '../../../src/errors/api-error.js';
import { errorKind, isNotFound, isRetryable } from '../../../src/errors/classify.js';
import { ConfigAggregateError } from '../../../src/errors/config-aggregate-error.js';
import { isRavenErrorCode, RAVEN_ERROR_CODES } from '../../../src/errors/error-codes.js';
import { isRavenError } from '../../../src/errors/is-raven-error.js';
import { OpenStackError, OpenStackProvisioningError } from '../../../src/errors/openstack-error.js';
import {
  AuthError,
  ConfigError,
  DecodeError,
  RavenError,
  SinkError,
  TransportError,
} from '../../../src/errors/raven-error.js';
import { CheckpointError } from '../../../src/raven/checkpoint/checkpoint-error.js';

const root = resolve(import.meta.dirname, '..', '..', '..');

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name));
}

test('the registry is sorted and holds each code once', () => {
  assert.deepEqual([...RAVEN_ERROR_CODES].sort(), [...RAVEN_ERROR_CODES]);
  assert.equal(new Set(RAVEN_ERROR_CODES).size, RAVEN_ERROR_CODES.length);
  for (const code of RAVEN_ERROR_CODES) assert.match(code, /^ERR_[A-Z]+(_[A-Z]+)*$/);
});

test('docs/errors.md has one table row for every code in the registry, and no other', async () => {
  const doc = await readFile(join(root, 'docs', 'errors.md'), 'utf8');
  const rows = [...doc.matchAll(/^\| `(ERR_[A-Z_]+)` +\|/gm)].map((m) => m[1]);
  assert.deepEqual([...rows].sort(), [...RAVEN_ERROR_CODES]);
});

test('every code in the registry is raised somewhere in src/', async () => {
  const files = (await sourceFiles(join(root, 'src'))).filter((f) => !f.endsWith('error-codes.ts'));
  const text = (await Promise.all(files.map((f) => readFile(f, 'utf8')))).join('\n');
  const unused = RAVEN_ERROR_CODES.filter((code) => !text.includes(`'${code}'`));
  assert.deepEqual(unused, [], 'codes nothing raises: remove them from the registry and docs/errors.md');
});

/** The modules docs/errors.md names as wrapping a plain Error's message in a RavenError at once. */
const MESSAGE_CARRIERS = [
  'src/client/auth/exec-credential.ts',
  'src/client/auth/token-file-auth.ts',
  'src/controller/lease-group.ts',
  'src/raven/checkpoint/sqlite-schema.ts',
];

test('a plain `throw new Error` in src/ is a broken invariant or in a module docs/errors.md names', async () => {
  const other: string[] = [];
  for (const file of await sourceFiles(join(root, 'src'))) {
    const path = file.slice(root.length + 1);
    const text = await readFile(file, 'utf8');
    // A throw whose message is one string literal; any other form is listed for a look.
    const throws = [...text.matchAll(/throw new Error\(/g)].length;
    const messages = [...text.matchAll(/throw new Error\(\s*([`'"])([^]*?)\1\s*,?\s*\)/g)];
    if (messages.length !== throws)
      other.push(`${path}: a throw new Error( whose message is not one literal`);
    for (const match of messages) {
      const bug = (match[2] ?? '').endsWith('(a bug)');
      if (!bug && !MESSAGE_CARRIERS.includes(path)) other.push(`${path}: ${match[0]}`);
    }
  }
  assert.deepEqual(other, [], 'raise a RavenError with a code, or end the message in "(a bug)"');
  const doc = await readFile(join(root, 'docs', 'errors.md'), 'utf8');
  for (const path of MESSAGE_CARRIERS) assert.ok(doc.includes(path), `docs/errors.md names ${path}`);
});

test('isRavenErrorCode tells registry codes from others', () => {
  assert.equal(isRavenErrorCode('ERR_API'), true);
  assert.equal(isRavenErrorCode('ERR_ARGUMENT'), false);
  assert.equal(isRavenErrorCode('ECONNRESET'), false);
  assert.equal(isRavenErrorCode(410), false);
});

test('every error class is recognised by its code, and not by another', () => {
  const status = { kind: 'Status', apiVersion: 'v1', code: 404, reason: 'NotFound', message: 'gone' };
  const cases: [RavenError, string][] = [
    [new ApiError(404, status), 'ERR_API'],
    [new AuthError('no token'), 'ERR_AUTH'],
    [new ConfigError('bad', { path: 'a.b' }), 'ERR_CONFIG'],
    [new ConfigAggregateError([new ConfigError('bad')]), 'ERR_CONFIG'],
    [new DecodeError('not JSON'), 'ERR_DECODE'],
    [new OpenStackError({ service: 'network', call: 'GET /v2.0/ports', status: 500 }), 'ERR_OPENSTACK'],
    [new SinkError('down', { retryable: true }), 'ERR_SINK'],
    [new TransportError('reset'), 'ERR_TRANSPORT'],
    [new CheckpointError('ERR_CHECKPOINT_LOCKED', 'held'), 'ERR_CHECKPOINT_LOCKED'],
    [new RavenError('ERR_INVALID_ARGUMENT', 'no'), 'ERR_INVALID_ARGUMENT'],
  ];
  for (const [err, code] of cases) {
    assert.equal(isRavenError(err), true, `${err.name} is a RavenError`);
    assert.equal(isRavenError(err, code as never), true, `${err.name} has ${code}`);
    assert.equal(isRavenError(err, code === 'ERR_API' ? 'ERR_SINK' : 'ERR_API'), false);
  }
});

test('isRavenError narrows to the class of the code', () => {
  const err: unknown = new ApiError(404, { code: 404, reason: 'NotFound' });
  if (!isRavenError(err, 'ERR_API')) assert.fail('an ApiError is ERR_API');
  assert.equal(err.statusCode, 404);
  const config: unknown = new ConfigError('must be a number', { path: 'server.port', file: 'raven.yaml' });
  if (!isRavenError(config, 'ERR_CONFIG')) assert.fail('a ConfigError is ERR_CONFIG');
  assert.equal(config.path, 'server.port');
});

test('look-alikes are not Raven errors: a plain Error with a Raven code, objects, primitives', () => {
  const plain = Object.assign(new Error('x'), { code: 'ERR_API' });
  assert.equal(isRavenError(plain), false);
  assert.equal(isRavenError(plain, 'ERR_API'), false);
  assert.equal(isRavenError({ code: 'ERR_API' }), false);
  assert.equal(isRavenError(null), false);
  assert.equal(isRavenError(undefined), false);
  assert.equal(isRavenError('ERR_API'), false);
  assert.equal(isNotFound(Object.assign(new Error('x'), { code: 'ERR_API', statusCode: 404 })), false);
});

test('the brand stays off the error itself: logs and JSON of an error do not show it', () => {
  const err = new TransportError('reset');
  assert.deepEqual(Object.getOwnPropertySymbols(err), []);
  assert.equal(Object.getOwnPropertySymbols(RavenError.prototype).length, 1);
});

test('an error from another copy of the package is recognised and classified, where instanceof fails', async () => {
  // A second copy: errors/ and util/ (all errors/ imports) copied to a temporary directory and
  // loaded from there, as a second kube-raven in node_modules would be.
  const dir = await mkdtemp(join(tmpdir(), 'raven-second-copy-'));
  try {
    await cp(join(root, 'src', 'errors'), join(dir, 'errors'), { recursive: true });
    await cp(join(root, 'src', 'util'), join(dir, 'util'), { recursive: true });
    const load = async <M>(file: string): Promise<M> =>
      (await import(pathToFileURL(join(dir, 'errors', file)).href)) as M;
    const other = await load<typeof import('../../../src/errors/api-error.js')>('api-error.ts');
    const otherBase = await load<typeof import('../../../src/errors/raven-error.js')>('raven-error.ts');
    const otherOpenStack =
      await load<typeof import('../../../src/errors/openstack-error.js')>('openstack-error.ts');

    const notFound = new other.ApiError(404, { code: 404, reason: 'NotFound' });
    const unavailable = new other.ApiError(503, { code: 503, reason: 'ServiceUnavailable' });
    assert.notEqual(otherBase.RavenError, RavenError, 'the copy has classes of its own');
    assert.equal(notFound instanceof RavenError, false);
    assert.equal(notFound instanceof ApiError, false);

    assert.equal(isRavenError(notFound), true);
    assert.equal(isRavenError(notFound, 'ERR_API'), true);
    assert.equal(isNotFound(notFound), true);
    assert.equal(isRetryable(notFound), false);
    assert.equal(isRetryable(unavailable), true);
    assert.equal(errorKind(notFound), 'api:404');
    assert.equal(isRetryable(new otherBase.SinkError('full', { retryable: false })), false);
    assert.equal(isRetryable(new otherBase.TransportError('reset')), true);
    const provisioning = new otherOpenStack.OpenStackProvisioningError({
      call: 'GET /v2/lbaas/loadbalancers/1',
      resource: { type: 'loadbalancer', id: '1' },
      provisioningStatus: 'ERROR',
      timedOut: false,
      waitedMs: 10,
    });
    assert.equal(errorKind(provisioning), 'openstack:provisioning');
    assert.equal(
      errorKind(new OpenStackProvisioningError({ ...provisioningOptions() })),
      'openstack:provisioning',
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

function provisioningOptions(): ConstructorParameters<typeof OpenStackProvisioningError>[0] {
  return {
    call: 'GET /v2/lbaas/loadbalancers/1',
    resource: { type: 'loadbalancer', id: '1' },
    provisioningStatus: 'PENDING_UPDATE',
    timedOut: true,
    waitedMs: 10,
  };
}
