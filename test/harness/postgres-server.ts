/**
 * PostgreSQL from Debian's `postgresql` package for the PostgreSQL sink's tests: a fresh cluster
 * (initdb) in a temporary directory, listening on 127.0.0.1 on a free port (no Unix socket outside
 * the directory), with a superuser `raven` trusted on loopback. PostgreSQL refuses to run as root,
 * so as root (CI) it runs as the package's `postgres` user.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { chmod, chown } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { LocalServer, serverDir, TestServer } from './local-server.js';

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

export class PostgresServer extends TestServer {
  /** `postgres://raven@127.0.0.1:<port>/<database>`. */
  url(database = 'postgres'): string {
    return `postgres://raven@127.0.0.1:${this.server.port}/${database}`;
  }

  /**
   * `durable: true` keeps PostgreSQL's own defaults (`fsync` on, `synchronous_commit` on): every
   * commit is on disk before it is acknowledged, as in production. The benchmarks that write
   * through PostgreSQL use it; tests leave it off, since a throwaway cluster need not survive a
   * power cut and each commit's flush costs several milliseconds on a shared disk.
   */
  static async start(options: { durable?: boolean } = {}): Promise<PostgresServer> {
    const base = await serverDir('postgres');
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
          ...(options.durable === true ? [] : ['-c', 'fsync=off']),
          '-c',
          'max_connections=50',
        ],
        stopSignal: 'SIGINT', // fast shutdown: ends sessions, writes a checkpoint
        // The listener opens before recovery ends.
        ready: async (port) => {
          const client = new pg.Client({ connectionString: `postgres://raven@127.0.0.1:${port}/postgres` });
          try {
            await client.connect();
            await client.query('SELECT 1');
          } finally {
            await client.end().catch(() => undefined);
          }
        },
        ...(user ?? {}),
      },
      base,
    );
    return new PostgresServer(server);
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
}
