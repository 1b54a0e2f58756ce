import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AuthError, ConfigError } from '../../../src/errors/raven-error.js';
import { ExecAuth, type ExecAuthOptions } from '../../../src/client/auth/exec-auth.js';
import type { ExecConfig } from '../../../src/client/kubeconfig-file.js';
import { FakeClock } from '../../../src/testing/fake-clock.js';
import { tempDir, write } from './helpers.js';

const v1 = 'client.authentication.k8s.io/v1';
const v1beta1 = 'client.authentication.k8s.io/v1beta1';

/** The FakeClock starts at 2023-11-14T22:13:20Z; this is ten minutes later. */
const tenMinutesIn = '2023-11-14T22:23:20Z';

/**
 * A plugin script that counts its runs in `count`, saves its exec info and env in `info` and
 * `env`, and prints a token numbered by the run (with `expiry` as expirationTimestamp if given).
 */
async function plugin(dir: string, opts: { expiry?: string; apiVersion?: string } = {}): Promise<string> {
  const expiry = opts.expiry === undefined ? '' : `,"expirationTimestamp":"${opts.expiry}"`;
  return write(
    dir,
    'plugin.sh',
    `#!/bin/sh
n=$(cat "${dir}/count" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "${dir}/count"
printf '%s' "$KUBERNETES_EXEC_INFO" > "${dir}/info"
printf '%s' "$PLUGIN_GREETING" > "${dir}/env"
printf '{"apiVersion":"${opts.apiVersion ?? v1}","kind":"ExecCredential","status":{"token":"token-%s"${expiry}}}' "$n"
`,
    0o755,
  );
}

function execConfig(command: string, extra: Partial<ExecConfig> = {}): ExecConfig {
  return {
    apiVersion: v1,
    command,
    args: [],
    env: [],
    provideClusterInfo: false,
    interactiveMode: 'Never',
    ...extra,
  };
}

function auth(exec: ExecConfig, extra: Partial<ExecAuthOptions> = {}): ExecAuth {
  return new ExecAuth({ exec, clock: new FakeClock(), stdinIsTTY: false, ...extra });
}

async function runs(dir: string): Promise<number> {
  return Number((await readFile(join(dir, 'count'), 'utf8')).trim());
}

async function rejectsAuth(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof AuthError, `expected an AuthError, got ${String(err)}`);
    assert.match(err.message, pattern);
    return true;
  });
}

test('the plugin token becomes a bearer header and the exec info and env reach the plugin', async () => {
  const dir = await tempDir();
  const command = await plugin(dir);
  const provider = auth(
    execConfig(command, { env: [{ name: 'PLUGIN_GREETING', value: 'hello' }], provideClusterInfo: true }),
    { cluster: { server: 'https://k.example', certificateAuthority: 'CA PEM', config: { audience: 'x' } } },
  );
  assert.deepEqual(await provider.authenticate(), { headers: { authorization: 'Bearer token-1' } });
  assert.deepEqual(JSON.parse(await readFile(join(dir, 'info'), 'utf8')), {
    apiVersion: v1,
    kind: 'ExecCredential',
    spec: {
      interactive: false,
      cluster: {
        server: 'https://k.example',
        'certificate-authority-data': Buffer.from('CA PEM').toString('base64'),
        config: { audience: 'x' },
      },
    },
  });
  assert.equal(await readFile(join(dir, 'env'), 'utf8'), 'hello');
});

test('credentials are cached until their expirationTimestamp', async () => {
  const dir = await tempDir();
  const clock = new FakeClock();
  const provider = auth(execConfig(await plugin(dir, { expiry: tenMinutesIn })), { clock });
  assert.equal((await provider.authenticate()).headers.authorization, 'Bearer token-1');
  await clock.tick(9 * 60_000);
  assert.equal((await provider.authenticate()).headers.authorization, 'Bearer token-1');
  await clock.tick(60_000);
  assert.equal((await provider.authenticate()).headers.authorization, 'Bearer token-2');
  assert.equal(await runs(dir), 2);
});

test('credentials without expiry are kept until invalidate, which re-runs the plugin', async () => {
  const dir = await tempDir();
  const clock = new FakeClock();
  const provider = auth(execConfig(await plugin(dir)), { clock });
  await provider.authenticate();
  await clock.tick(365 * 24 * 3_600_000);
  assert.equal((await provider.authenticate()).headers.authorization, 'Bearer token-1');
  provider.invalidate();
  assert.equal((await provider.authenticate()).headers.authorization, 'Bearer token-2');
});

test('concurrent callers share one plugin invocation', async () => {
  const dir = await tempDir();
  const provider = auth(execConfig(await plugin(dir)));
  const all = await Promise.all([provider.authenticate(), provider.authenticate(), provider.authenticate()]);
  assert.deepEqual(
    all.map((c) => c.headers.authorization),
    ['Bearer token-1', 'Bearer token-1', 'Bearer token-1'],
  );
  assert.equal(await runs(dir), 1);
});

test('a missing plugin binary is an AuthError carrying the install hint', async () => {
  const dir = await tempDir();
  const provider = auth(
    execConfig(join(dir, 'no-such-plugin'), { installHint: 'Install it with: get-plugin --latest\n' }),
  );
  await rejectsAuth(
    provider.authenticate(),
    /no-such-plugin" not found.*\nInstall it with: get-plugin --latest$/s,
  );
});

test('a plugin exiting non-zero is an AuthError with its trimmed stderr', async () => {
  const dir = await tempDir();
  const command = await write(
    dir,
    'fail.sh',
    '#!/bin/sh\necho "  login required: run sso  " >&2\nexit 3\n',
    0o755,
  );
  await rejectsAuth(auth(execConfig(command)).authenticate(), /exited with code 3: login required: run sso$/);
});

test('bad plugin output is rejected with the reason', async () => {
  const dir = await tempDir();
  const notJson = await write(dir, 'a.sh', '#!/bin/sh\necho hello\n', 0o755);
  await rejectsAuth(auth(execConfig(notJson)).authenticate(), /bad output: stdout is not JSON: "hello"/);
  const wrongVersion = await plugin(dir, { apiVersion: v1beta1 });
  await rejectsAuth(
    auth(execConfig(wrongVersion)).authenticate(),
    /apiVersion is ".*v1beta1", want ".*\/v1" as configured/,
  );
  const noToken = await write(
    dir,
    'b.sh',
    `#!/bin/sh\necho '{"apiVersion":"${v1}","kind":"ExecCredential","status":{"clientKeyData":"k"}}'\n`,
    0o755,
  );
  await rejectsAuth(
    auth(execConfig(noToken)).authenticate(),
    /clientCertificateData and status.clientKeyData must be given together/,
  );
});

test('a client certificate from the plugin is returned as cert and key', async () => {
  const dir = await tempDir();
  const command = await write(
    dir,
    'cert.sh',
    `#!/bin/sh\necho '{"apiVersion":"${v1}","kind":"ExecCredential","status":{"clientCertificateData":"CERT","clientKeyData":"KEY"}}'\n`,
    0o755,
  );
  assert.deepEqual(await auth(execConfig(command)).authenticate(), { headers: {}, cert: 'CERT', key: 'KEY' });
});

test('v1 requires interactiveMode while v1beta1 defaults to IfAvailable', async () => {
  const dir = await tempDir();
  const command = await plugin(dir, { apiVersion: v1beta1 });
  // Without interactiveMode, as a kubeconfig that does not give it is parsed.
  const { interactiveMode: _mode, ...withoutMode } = execConfig(command);
  assert.throws(
    () => auth(withoutMode),
    (err: unknown) => err instanceof ConfigError && /exec\.interactiveMode: is required/.test(err.message),
  );
  const beta = auth(
    { ...withoutMode, apiVersion: v1beta1 },
    {
      stdinIsTTY: true,
    },
  );
  await beta.authenticate();
  assert.equal(
    (JSON.parse(await readFile(join(dir, 'info'), 'utf8')) as { spec: { interactive: boolean } }).spec
      .interactive,
    true,
  );
});

test('interactiveMode Always fails without a terminal and Never runs without stdin', async () => {
  const dir = await tempDir();
  const command = await plugin(dir);
  await rejectsAuth(
    auth(execConfig(command, { interactiveMode: 'Always' })).authenticate(),
    /interactiveMode Always but stdin is not a terminal/,
  );
  const reader = await write(
    dir,
    'reader.sh',
    `#!/bin/sh\nin=$(cat)\nprintf '{"apiVersion":"${v1}","kind":"ExecCredential","status":{"token":"read-%s"}}' "$in"\n`,
    0o755,
  );
  const never = auth(execConfig(reader, { interactiveMode: 'Never' }), { stdinIsTTY: true });
  assert.equal((await never.authenticate()).headers.authorization, 'Bearer read-');
});

test('a plugin that runs past the timeout is killed and reported', async () => {
  const dir = await tempDir();
  const command = await write(dir, 'slow.sh', '#!/bin/sh\nexec sleep 30\n', 0o755);
  const clock = new FakeClock();
  const provider = auth(execConfig(command), { clock, timeoutMs: 5_000 });
  const outcome = rejectsAuth(provider.authenticate(), /did not finish within 5000 ms and was killed/);
  await clock.tick(5_000);
  await outcome;
});
