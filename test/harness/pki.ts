/**
 * Certificates and keys for the test control plane, made with the openssl command: a CA, the
 * apiserver's serving certificate (valid for 127.0.0.1, ::1 and localhost), client certificates
 * for the admin (group system:masters) and the controller-manager, and the service-account
 * signing key pair. Elliptic-curve keys keep generation well under a second.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Pki {
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  adminCert: string;
  adminKey: string;
  controllerManagerCert: string;
  controllerManagerKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  await run('openssl', args, { cwd });
}

async function ecKey(dir: string, name: string): Promise<string> {
  const path = join(dir, name);
  await openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path], dir);
  return path;
}

async function signed(
  dir: string,
  name: string,
  subject: string,
  extensions: string,
  ca: { cert: string; key: string },
): Promise<{ cert: string; key: string }> {
  const key = await ecKey(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  const cert = join(dir, `${name}.crt`);
  await writeFile(ext, extensions);
  await openssl(['req', '-new', '-key', key, '-subj', subject, '-out', csr], dir);
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      ca.cert,
      '-CAkey',
      ca.key,
      '-CAcreateserial',
      '-days',
      '30',
      '-out',
      cert,
      '-extfile',
      ext,
    ],
    dir,
  );
  return { cert, key };
}

/** Generate the whole PKI into `dir` (which must exist). */
export async function generatePki(dir: string): Promise<Pki> {
  const caKey = await ecKey(dir, 'ca.key');
  const caCert = join(dir, 'ca.crt');
  await openssl(
    [
      'req',
      '-x509',
      '-new',
      '-key',
      caKey,
      '-subj',
      '/CN=raven-test-ca',
      '-days',
      '30',
      '-out',
      caCert,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
    ],
    dir,
  );
  const ca = { cert: caCert, key: caKey };
  const server = await signed(
    dir,
    'apiserver',
    '/CN=kube-apiserver',
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,IP:::1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc',
    ].join('\n'),
    ca,
  );
  const clientExt =
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n';
  const admin = await signed(dir, 'admin', '/O=system:masters/CN=raven-admin', clientExt, ca);
  const cm = await signed(dir, 'controller-manager', '/CN=system:kube-controller-manager', clientExt, ca);
  const serviceAccountKey = join(dir, 'sa.key');
  const serviceAccountPub = join(dir, 'sa.pub');
  await openssl(
    ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', serviceAccountKey],
    dir,
  );
  await openssl(['pkey', '-in', serviceAccountKey, '-pubout', '-out', serviceAccountPub], dir);
  return {
    caCert,
    caKey,
    serverCert: server.cert,
    serverKey: server.key,
    adminCert: admin.cert,
    adminKey: admin.key,
    controllerManagerCert: cm.cert,
    controllerManagerKey: cm.key,
    serviceAccountKey,
    serviceAccountPub,
  };
}
