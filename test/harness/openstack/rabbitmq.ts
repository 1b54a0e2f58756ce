/**
 * RabbitMQ for the OpenStack lab (octavia-api casts to octavia-worker through it), bound to
 * 127.0.0.1 only: AMQP, Erlang distribution, the CLI's distribution port and epmd all on free
 * loopback ports of their own, so several labs (or a system RabbitMQ) can run side by side.
 *
 * The Erlang VM starts epmd as a daemon outside the server's process group; {@link findEpmd} finds
 * it by its port so the lab can end it by pid.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { execFileAsync } from './processes.js';

export interface RabbitPorts {
  amqp: number;
  dist: number;
  epmd: number;
  ctlDist: number;
}

const binDir = '/usr/lib/rabbitmq/bin';
const loopbackOnly = '-kernel inet_dist_use_interface {127,0,0,1}';

export const rabbitmqServer = join(binDir, 'rabbitmq-server');

/** The environment for rabbitmq-server and rabbitmqctl: everything under `<dir>/rabbitmq`. */
export function rabbitEnv(dir: string, ports: RabbitPorts): NodeJS.ProcessEnv {
  const base = join(dir, 'rabbitmq');
  return {
    PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
    LANG: 'C.UTF-8',
    // The Erlang cookie lives in $HOME.
    HOME: join(base, 'home'),
    RABBITMQ_NODENAME: 'rabbit@localhost',
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(ports.amqp),
    RABBITMQ_DIST_PORT: String(ports.dist),
    RABBITMQ_CTL_DIST_PORT_MIN: String(ports.ctlDist),
    RABBITMQ_CTL_DIST_PORT_MAX: String(ports.ctlDist),
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: loopbackOnly,
    RABBITMQ_CTL_ERL_ARGS: loopbackOnly,
    ERL_EPMD_ADDRESS: '127.0.0.1',
    ERL_EPMD_PORT: String(ports.epmd),
    RABBITMQ_CONF_ENV_FILE: join(base, 'rabbitmq-env.conf'),
    RABBITMQ_CONFIG_FILE: join(base, 'rabbitmq.conf'),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(base, 'advanced.config'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(base, 'enabled_plugins'),
    RABBITMQ_MNESIA_BASE: join(base, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'logs', 'rabbitmq'),
    RABBITMQ_PID_FILE: join(base, 'rabbit.pid'),
  };
}

/** Write RabbitMQ's files; `config` is the rendered rabbitmq.conf. */
export async function prepareRabbit(dir: string, config: string): Promise<void> {
  const base = join(dir, 'rabbitmq');
  await mkdir(join(base, 'home'), { recursive: true });
  await mkdir(join(base, 'mnesia'), { recursive: true });
  await mkdir(join(dir, 'logs', 'rabbitmq'), { recursive: true });
  await writeFile(join(base, 'rabbitmq.conf'), config);
  // Empty on purpose: the system-wide /etc/rabbitmq/rabbitmq-env.conf must not apply.
  await writeFile(join(base, 'rabbitmq-env.conf'), '');
  await writeFile(join(base, 'enabled_plugins'), '[].\n');
}

/**
 * Whether the broker speaks AMQP on `port`: send the 0-9-1 protocol header and expect a frame of
 * type 1 (method: Connection.Start) back. The listener opens only once the broker has booted.
 */
export function amqpReady(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write(Buffer.from('AMQP\x00\x00\x09\x01', 'latin1')));
    socket.once('data', (data: Buffer) => done(data[0] === 1));
  });
}

/** Ask the broker to stop (it flushes its state); resolves false when it could not be asked. */
export async function rabbitctlStop(dir: string, ports: RabbitPorts): Promise<boolean> {
  try {
    await execFileAsync(join(binDir, 'rabbitmqctl'), ['stop'], {
      env: rabbitEnv(dir, ports),
      timeout: 30_000,
    });
    return true;
  } catch {
    return false;
  }
}

/** The pid of the epmd daemon listening on `port` (found by its environment), if one runs. */
export function findEpmd(port: number): number | undefined {
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'epmd') continue;
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (environ.includes(`ERL_EPMD_PORT=${port}`)) return pid;
    } catch {
      // Gone, or not ours to read.
    }
  }
  return undefined;
}

/** How many consumers queue `name` has (0 when it is not declared yet), through rabbitmqctl. */
export async function rabbitQueueConsumers(dir: string, ports: RabbitPorts, name: string): Promise<number> {
  const { stdout } = await execFileAsync(
    join(binDir, 'rabbitmqctl'),
    ['list_queues', '--quiet', '--no-table-headers', 'name', 'consumers'],
    { env: rabbitEnv(dir, ports), timeout: 30_000 },
  );
  for (const line of stdout.split('\n')) {
    const [queue, consumers] = line.trim().split(/\s+/);
    if (queue === name) return Number(consumers);
  }
  return 0;
}
