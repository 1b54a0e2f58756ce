/**
 * The lab's files on disk: directory layout, configuration rendered from ./templates, the SQLite
 * schemas built from the OpenStack models and stamped, and the Octavia CA.
 *
 * Neither project's database migrations run on SQLite (they ALTER constraints), so the schema is
 * created from the ORM models, the way their own unit tests do, and then stamped at head so
 * the services consider it current. That takes ~15 s of CPU, so the stamped files are built once per
 * installed package version and copied into each lab.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { cacheRoot } from '../binaries.js';
import type { RabbitPorts } from './rabbitmq.js';
import { execFileAsync } from './processes.js';

const templates = join(import.meta.dirname, 'templates');

/** OpenStack's Python: another python3 may come first on PATH without its libraries. */
export const python = '/usr/bin/python3';

export interface LabPorts {
  neutron: number;
  octaviaApi: number;
  rabbitmq: RabbitPorts;
}

export interface LabPaths {
  neutronConf: string;
  ml2Conf: string;
  neutronConfDir: string;
  octaviaConf: string;
  octaviaConfDir: string;
  rabbitmqConf: string;
  neutronDb: string;
  octaviaDb: string;
  caDir: string;
  logs: string;
}

export function labPaths(dir: string): LabPaths {
  return {
    neutronConf: join(dir, 'neutron', 'neutron.conf'),
    ml2Conf: join(dir, 'neutron', 'ml2_conf.ini'),
    // Empty directories passed as --config-dir, so no system-wide *.conf.d applies.
    neutronConfDir: join(dir, 'neutron', 'conf.d'),
    octaviaConf: join(dir, 'octavia', 'octavia.conf'),
    octaviaConfDir: join(dir, 'octavia', 'conf.d'),
    rabbitmqConf: join(dir, 'rabbitmq', 'rabbitmq.conf'),
    neutronDb: join(dir, 'state', 'neutron.sqlite'),
    octaviaDb: join(dir, 'state', 'octavia.sqlite'),
    caDir: join(dir, 'octavia', 'ca'),
    logs: join(dir, 'logs'),
  };
}

/**
 * The environment of every OpenStack process: nothing from the caller's Python setup, and the
 * lab's sitecustomize.py (./python), which lets the services' processes share their SQLite files
 * on a loaded machine without "database is locked" failures.
 */
export function openstackEnv(
  dir: string,
  options: { immediateTransactions?: boolean } = {},
): NodeJS.ProcessEnv {
  return {
    PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: dir,
    LANG: 'C.UTF-8',
    PYTHONPATH: join(import.meta.dirname, 'python'),
    // Nothing written into the repository's tree when sitecustomize.py is imported.
    PYTHONDONTWRITEBYTECODE: '1',
    // Octavia's processes begin every transaction holding the write lock (see sitecustomize.py).
    ...(options.immediateTransactions === true ? { RAVEN_LAB_SQLITE_IMMEDIATE: '1' } : {}),
  };
}

async function render(name: string, values: Record<string, string | number>): Promise<string> {
  let text = await readFile(join(templates, name), 'utf8');
  for (const [key, value] of Object.entries(values)) text = text.replaceAll(`@${key}@`, String(value));
  const left = /@[A-Z_]+@/.exec(text);
  if (left) throw new Error(`template ${name}: no value for ${left[0]}`);
  return text;
}

/** Create the directory tree and write every configuration file. */
export async function writeConfigs(dir: string, ports: LabPorts): Promise<LabPaths> {
  const paths = labPaths(dir);
  for (const sub of ['state', 'lock', 'logs', 'neutron/policy.d', 'neutron/conf.d', 'octavia/conf.d'])
    await mkdir(join(dir, sub), { recursive: true });
  await mkdir(paths.caDir, { recursive: true });
  const values = {
    LAB: dir,
    NEUTRON_PORT: ports.neutron,
    OCTAVIA_PORT: ports.octaviaApi,
    RABBITMQ_PORT: ports.rabbitmq.amqp,
  };
  await writeFile(paths.neutronConf, await render('neutron.conf', values));
  await writeFile(paths.ml2Conf, await render('ml2_conf.ini', values));
  await writeFile(paths.octaviaConf, await render('octavia.conf', values));
  return paths;
}

/** The rendered rabbitmq.conf (RabbitMQ's own directory is prepared by rabbitmq.ts). */
export function rabbitmqConfig(ports: LabPorts): Promise<string> {
  return render('rabbitmq.conf', { RABBITMQ_PORT: ports.rabbitmq.amqp });
}

async function run(dir: string, argv: string[], what: string): Promise<void> {
  const [command, ...args] = argv;
  if (command === undefined) throw new Error(`${what}: empty command`);
  try {
    await execFileAsync(command, args, { env: openstackEnv(dir), timeout: 120_000, maxBuffer: 16 << 20 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${what} failed: ${e.message}\n${(e.stderr ?? '').split('\n').slice(-15).join('\n')}`, {
      cause: err,
    });
  }
}

/** Neutron's schema from its models, stamped at every branch head. */
async function buildNeutronSchema(dir: string, paths: LabPaths): Promise<void> {
  const script = join(templates, 'neutron_create_schema.py');
  await run(dir, [python, script, `sqlite:///${paths.neutronDb}`], 'building the Neutron schema');
  await run(
    dir,
    [
      'neutron-db-manage',
      '--config-file',
      paths.neutronConf,
      '--config-file',
      paths.ml2Conf,
      'stamp',
      'heads',
    ],
    'stamping the Neutron schema',
  );
}

/** Octavia's schema from its models with the lookup tables seeded, stamped at head. */
async function buildOctaviaSchema(dir: string, paths: LabPaths): Promise<void> {
  const script = join(templates, 'octavia_create_schema.py');
  await run(dir, [python, script, `sqlite:///${paths.octaviaDb}`], 'building the Octavia schema');
  await run(
    dir,
    ['octavia-db-manage', '--config-file', paths.octaviaConf, 'stamp', 'head'],
    'stamping the Octavia schema',
  );
}

/**
 * Copy stamped Neutron and Octavia databases into the lab, building them first (in a scratch lab
 * directory under the cache) when this package version has none yet. The cache key covers the
 * installed python3-neutron and python3-octavia versions and the two schema scripts.
 */
export async function installSchemas(paths: LabPaths, log: (line: string) => void): Promise<void> {
  const { stdout: versions } = await execFileAsync('dpkg-query', [
    '-W',
    '-f=${Package}=${Version}\\n',
    'python3-neutron',
    'python3-octavia',
  ]);
  const hash = createHash('sha256').update(versions);
  for (const script of ['neutron_create_schema.py', 'octavia_create_schema.py'])
    hash.update(await readFile(join(templates, script)));
  const cached = join(cacheRoot(), 'openstack-schema', hash.digest('hex').slice(0, 16));
  if (!existsSync(join(cached, '.complete'))) {
    log(`building the Neutron and Octavia schemas into ${cached}`);
    const scratch = `${cached}.tmp-${process.pid}`;
    await rm(scratch, { recursive: true, force: true });
    const scratchPaths = await writeConfigs(scratch, {
      neutron: 0,
      octaviaApi: 0,
      rabbitmq: { amqp: 0, dist: 0, epmd: 0, ctlDist: 0 },
    });
    await Promise.all([buildNeutronSchema(scratch, scratchPaths), buildOctaviaSchema(scratch, scratchPaths)]);
    await writeFile(join(scratch, 'state', '.complete'), versions);
    // Another process may have finished the same build first; its files are as good as ours.
    await rename(join(scratch, 'state'), cached).catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  }
  await copyFile(join(cached, 'neutron.sqlite'), paths.neutronDb);
  await copyFile(join(cached, 'octavia.sqlite'), paths.octaviaDb);
  await useWriteAheadLog(paths);
}

/**
 * Several processes write each database (neutron-server and its forked workers; octavia-api and
 * the worker's consumers), and on a loaded machine a transaction can hold the lock for seconds.
 * In SQLite's default rollback-journal mode readers block a writer's commit; in write-ahead-log
 * mode they do not. The mode is stored in the file, so it is set once here. Writers still meet:
 * python/sitecustomize.py makes a statement wait for the lock without stalling the process, and
 * has a transaction that lost a race retried like a MySQL deadlock.
 */
async function useWriteAheadLog(paths: LabPaths): Promise<void> {
  const script =
    'import sqlite3, sys\nfor path in sys.argv[1:]:\n    sqlite3.connect(path).execute("PRAGMA journal_mode=WAL").fetchall()\n';
  await run(
    dirname(dirname(paths.neutronDb)),
    [python, '-c', script, paths.neutronDb, paths.octaviaDb],
    'switching the databases to WAL',
  );
}

/**
 * A throwaway CA for octavia-worker, which loads certificates even though the noop drivers never
 * talk TLS to an amphora.
 */
export async function generateOctaviaCa(dir: string, paths: LabPaths): Promise<void> {
  const key = join(paths.caDir, 'ca.key');
  const cert = join(paths.caDir, 'ca.pem');
  await run(
    dir,
    ['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert].concat([
      '-days',
      '30',
      '-subj',
      '/CN=raven-openstack-lab-ca',
    ]),
    'generating the Octavia CA',
  );
  const [keyPem, certPem] = await Promise.all([readFile(key, 'utf8'), readFile(cert, 'utf8')]);
  await writeFile(join(paths.caDir, 'client.pem'), keyPem + certPem, { mode: 0o600 });
}
