/**
 * Redis from Debian's `redis-server` package for the Redis sink's tests: one server on 127.0.0.1
 * on a free port, its data (an append-only file) in a temporary directory, kept across down/up so
 * a restarted server has its streams and keys.
 */
import { Redis } from 'ioredis';
import { LocalServer, serverDir, TestServer } from './local-server.js';

export class RedisServer extends TestServer {
  url(db = 0): string {
    return `redis://127.0.0.1:${this.server.port}/${db}`;
  }

  static async start(): Promise<RedisServer> {
    const base = await serverDir('redis');
    const server = await LocalServer.start(
      {
        name: 'redis',
        argv: (port) => [
          'redis-server',
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--dir',
          base,
          '--appendonly',
          'yes',
          '--save',
          '',
          '--databases',
          '64',
        ],
        // The listener opens before the append-only file is loaded.
        ready: (port) => withRedis(`redis://127.0.0.1:${port}/0`, (r) => r.ping()).then(() => undefined),
      },
      base,
    );
    return new RedisServer(server);
  }

  /** Run `body` with a connection of its own to database `db`. */
  using<T>(db: number, body: (redis: Redis) => Promise<T>): Promise<T> {
    return withRedis(this.url(db), body);
  }

  /** Every entry of `stream` in database `db`, oldest first, as field maps. */
  async entries(stream: string, db = 0): Promise<Record<string, string>[]> {
    return this.using(db, async (redis) => {
      const raw = await redis.xrange(stream, '-', '+');
      return raw.map(([, fields]) => {
        const out: Record<string, string> = {};
        for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i] ?? ''] = fields[i + 1] ?? '';
        return out;
      });
    });
  }
}

async function withRedis<T>(url: string, body: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  await redis.connect();
  try {
    return await body(redis);
  } finally {
    redis.disconnect();
  }
}
