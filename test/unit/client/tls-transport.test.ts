import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import { TransportError } from '../../../src/errors/raven-error.js';
import { KubeClient } from '../../../src/client/kube-client.js';
import { configFor, CountingAuth, startServer, status, type Step } from './test-server.js';
import { tempDir } from './helpers.js';

/** A throwaway CA, a server certificate for `names` and client certificates, made with openssl. */
async function pki(names: string) {
  const dir = await tempDir();
  const ssl = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  };
  const read = (f: string): string => readFileSync(join(dir, f), 'utf8');
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '1',
    '-subj',
    '/CN=test-ca',
  );
  const issue = (name: string, subject: string, ext: string): void => {
    ssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      subject,
    );
    execFileSync('sh', ['-c', `printf '%s' "${ext}" > ${name}.ext`], { cwd: dir });
    ssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
    );
  };
  issue('server', '/CN=server', `subjectAltName=${names}`);
  issue('alice', '/CN=alice', 'extendedKeyUsage=clientAuth');
  issue('bob', '/CN=bob', 'extendedKeyUsage=clientAuth');
  return {
    ca: read('ca.crt'),
    server: { cert: read('server.crt'), key: read('server.key') },
    alice: { cert: read('alice.crt'), key: read('alice.key') },
    bob: { cert: read('bob.crt'), key: read('bob.key') },
  };
}

/** Answer with the common name of the client certificate. */
const whoAmI: Step = (req, res) => {
  assert.ok(req.socket instanceof TLSSocket);
  const peer = req.socket.getPeerCertificate();
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ cn: peer.subject.CN }));
};

test('TLS uses the configured CA and client certificate, and a new certificate after re-authentication', async () => {
  const certs = await pki('IP:127.0.0.1');
  const server = await startServer({
    ...certs.server,
    ca: certs.ca,
    requestCert: true,
    rejectUnauthorized: true,
  });
  const auth = new CountingAuth();
  auth.cert = [certs.alice, certs.bob];
  const client = new KubeClient(configFor(server.url, auth, certs.ca));
  server.play(
    whoAmI,
    (_req, res) => {
      res
        .writeHead(401, { 'content-type': 'application/json' })
        .end(JSON.stringify(status(401, 'Unauthorized', 'x')));
    },
    whoAmI,
  );
  assert.deepEqual(await client.request({ method: 'GET', path: '/whoami' }), { cn: 'alice' });
  assert.deepEqual(await client.request({ method: 'GET', path: '/whoami' }), { cn: 'bob' });
  server.assertConsumed();
  await client.close();
});

test('an untrusted server certificate fails unless insecure-skip-tls-verify is set', async () => {
  const certs = await pki('IP:127.0.0.1');
  const server = await startServer(certs.server);
  const strict = new KubeClient(configFor(server.url, new CountingAuth()));
  await assert.rejects(
    strict.request({ method: 'GET', path: '/' }),
    (err: unknown) => err instanceof TransportError,
  );
  await strict.close();
  const insecure = new KubeClient({
    ...configFor(server.url, new CountingAuth()),
    tls: { insecureSkipTlsVerify: true },
  });
  server.play((_req, res) => res.writeHead(200).end('{}'));
  assert.deepEqual(await insecure.request({ method: 'GET', path: '/' }), {});
  await insecure.close();
});

test('tls-server-name verifies the server under another name than the URL host', async () => {
  const certs = await pki('DNS:api.internal');
  const server = await startServer(certs.server);
  const config = configFor(server.url, new CountingAuth(), certs.ca);
  const client = new KubeClient({ ...config, tls: { ...config.tls, serverName: 'api.internal' } });
  server.play((_req, res) => res.writeHead(200).end('{"ok":true}'));
  assert.deepEqual(await client.request({ method: 'GET', path: '/' }), { ok: true });
  await client.close();
});
