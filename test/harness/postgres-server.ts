/**
 * PostgreSQL from Debian's `postgresql` package for the PostgreSQL sink's tests: a fresh cluster
 * (initdb) in a temporary directory, listening on 127.0.0.1 on a free port (no Unix socket outside
 * the directory), with a superuser `raven` trusted on loopback. PostgreSQL refuses to run as root,
 * so as root (CI) it runs as the package's `postgres` user.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { LocalServer } from './local-server.js';

function binDir(): string {
  const versions = readdirSync('/usr/lib/postgresql')
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  if (versions[0] === undefined)
    throw new Error('PostgreSQL is not installed: run `npm run setup` (scripts/install-system-packages.sh)');
  return join('/usr/lib/postgresql', versions[0], 'bin');
}

function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

export class PostgresServer {
  readonly server: LocalServer;
  readonly #base: string;

  private constructor(server: LocalServer, base: string) {
    this.server = server;
    this.#base = base;
  }

  /** `postgres://raven@127.0.0.1:<port>/<database>`. */
  url(database = 'postgres'): string {
    return `postgres://raven@127.0.0.1:${this.server.port}/${database}`;
  }

  static async start(): Promise<PostgresServer> {
    const base = await mkdtemp(join(tmpdir(), 'raven-test-postgres-'));
    const user = runAs();
    if (user !== undefined) {
      await chown(base, user.uid, user.gid);
      await chmod(base, 0o755);
    }
    const bin = binDir();
    const data = join(base, 'data');
    execFileSync(
      join(bin, 'initdb'),
      ['-D', data, '-U', 'raven', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'],
      { stdio: 'pipe', ...(user ?? {}) },
    );
    const server = await LocalServer.start(
      {
        name: 'postgres',
        argv: (port) => [
          join(bin, 'postgres'),
          '-D',
          data,
          '-p',
          String(port),
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          `unix_socket_directories=${base}`,
          // A test cluster: losing the last transactions on a power cut does not matter, speed does.
          '-c',
          'fsync=off',
          '-c',
          'max_connections=50',
        ],
        stopSignal: 'SIGINT', // fast shutdown: ends sessions, writes a checkpoint
        ...(user ?? {}),
      },
      base,
    );
    const pgServer = new PostgresServer(server, base);
    await pgServer.ready();
    return pgServer;
  }

  /** Wait until a query succeeds (the listener opens before recovery ends). */
  async ready(): Promise<void> {
    for (let i = 0; ; i++) {
      const client = new pg.Client({ connectionString: this.url() });
      try {
        await client.connect();
        await client.query('SELECT 1');
        return;
      } catch (err) {
        if (i > 600) throw new Error(`postgres not ready: ${String(err)}\n${await this.server.log()}`);
        await delay(100);
      } finally {
        await client.end().catch(() => undefined);
      }
    }
  }

  /** Run one statement on `database`. */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    sql: string,
    params: unknown[] = [],
    database = 'postgres',
  ): Promise<R[]> {
    const client = new pg.Client({ connectionString: this.url(database) });
    await client.connect();
    try {
      return (await client.query<R>(sql, params)).rows;
    } finally {
      await client.end();
    }
  }

  async down(): Promise<void> {
    await this.server.down();
  }

  async up(): Promise<void> {
    await this.server.up();
    await this.ready();
  }

  async stop(): Promise<void> {
    await this.server.stop();
    await rm(this.#base, { recursive: true, force: true });
  }
}
