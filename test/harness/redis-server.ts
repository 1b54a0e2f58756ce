/**
 * Redis from Debian's `redis-server` package for the Redis sink's tests: one server on 127.0.0.1
 * on a free port, its data (an append-only file) in a temporary directory, kept across down/up so
 * a restarted server has its streams and keys.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { LocalServer } from './local-server.js';

export class RedisServer {
  readonly server: LocalServer;
  readonly #base: string;

  private constructor(server: LocalServer, base: string) {
    this.server = server;
    this.#base = base;
  }

  url(db = 0): string {
    return `redis://127.0.0.1:${this.server.port}/${db}`;
  }

  static async start(): Promise<RedisServer> {
    const base = await mkdtemp(join(tmpdir(), 'raven-test-redis-'));
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
      },
      base,
    );
    const redis = new RedisServer(server, base);
    await redis.ready();
    return redis;
  }

  /** Wait until a command succeeds (the listener opens before the append-only file is loaded). */
  async ready(): Promise<void> {
    for (let i = 0; ; i++) {
      try {
        await this.using(0, (r) => r.ping());
        return;
      } catch (err) {
        if (i > 600) throw new Error(`redis not ready: ${String(err)}\n${await this.server.log()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  /** Run `body` with a connection of its own to database `db`. */
  async using<T>(db: number, body: (redis: Redis) => Promise<T>): Promise<T> {
    const redis = new Redis(this.url(db), {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    redis.on('error', () => undefined);
    await redis.connect();
    try {
      return await body(redis);
    } finally {
      redis.disconnect();
    }
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
