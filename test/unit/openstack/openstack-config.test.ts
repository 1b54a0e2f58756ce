import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../src/errors/raven-error.js';
import { ConfigAggregateError } from '../../../src/errors/config-aggregate-error.js';
import { parseOpenStackConfig } from '../../../src/openstack/openstack-config.js';

function problems(input: unknown, path?: (string | number)[]): ConfigError[] {
  try {
    parseOpenStackConfig(input, path === undefined ? {} : { path });
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err instanceof ConfigAggregateError ? [...err.errors] : [err];
  }
  assert.fail('expected the configuration to be rejected');
}

test('a noauth configuration gets the documented defaults', () => {
  const config = parseOpenStackConfig({
    auth: { type: 'noauth', projectId: 'p1' },
    endpoints: { network: 'http://127.0.0.1:9696', loadBalancer: 'http://127.0.0.1:9876' },
  });
  assert.equal(config.interface, 'public');
  assert.equal(config.timeoutMs, 30_000);
  assert.deepEqual(config.retry, { maxAttempts: 4, baseDelayMs: 250, maxDelayMs: 4_000 });
  assert.equal(config.tagPortsOnCreate, true);
});

test('noauth without a Neutron endpoint names endpoints.network', () => {
  const [problem] = problems({ auth: { type: 'noauth', projectId: 'p1' } });
  assert.equal(problem?.path, 'endpoints.network');
});

test('password auth needs a user domain and exactly one scope, each named by its field', () => {
  const found = problems({
    auth: { type: 'password', authUrl: 'http://127.0.0.1:5000/v3', username: 'raven', password: 's3cret-pw' },
  });
  const paths = found.map((p) => p.path).sort();
  assert.deepEqual(paths, ['auth.projectId', 'auth.userDomainName']);
});

test('a project name needs its domain', () => {
  const [problem] = problems({
    auth: {
      type: 'password',
      authUrl: 'http://127.0.0.1:5000',
      userId: 'u1',
      password: 'pw',
      projectName: 'demo',
    },
  });
  assert.equal(problem?.path, 'auth.projectDomainName');
});

test("errors name the field under the caller's path and never echo a secret", () => {
  const found = problems(
    {
      auth: {
        type: 'applicationCredential',
        authUrl: 'ftp://keystone',
        applicationCredentialId: 'ac1',
        applicationCredentialSecret: 42,
      },
      retry: { maxAttempts: 0 },
      colour: 'blue',
    },
    ['translators', 0, 'openstack'],
  );
  const paths = found.map((p) => p.path).sort();
  assert.deepEqual(paths, [
    'translators[0].openstack',
    'translators[0].openstack.auth.applicationCredentialSecret',
    'translators[0].openstack.auth.authUrl',
    'translators[0].openstack.retry.maxAttempts',
  ]);
  const secretRun = problems({
    auth: {
      type: 'password',
      authUrl: 'not a url',
      userId: 'u',
      password: 'hunter2-very-secret',
      projectId: 'p',
    },
  });
  assert.ok(secretRun.every((p) => !p.message.includes('hunter2')));
});

test('an unknown auth type lists the valid ones', () => {
  const [problem] = problems({ auth: { type: 'kerberos' } });
  assert.equal(problem?.path, 'auth.type');
  assert.match(problem.message, /'password', 'applicationCredential' or 'noauth'/);
});
