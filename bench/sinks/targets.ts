/**
 * The servers the sinks suite writes to, each from the test harness (Debian's packages on
 * loopback), and how to build each sink from dist/ and count what the server holds.
 */
import type { Sink } from '../../src/raven/sinks/sink.js';
import { NatsServer } from '../../test/harness/nats-server.js';
import { PostgresServer } from '../../test/harness/postgres-server.js';
import { RedisServer } from '../../test/harness/redis-server.js';
import { LokiServer } from '../../test/harness/loki-server.js';
import { ravenDist } from '../lib/raven.js';

type PostgresModule = typeof import('../../src/raven/sinks/postgres-sink.js');
type NatsModule = typeof import('../../src/raven/sinks/nats-sink.js');
type RedisModule = typeof import('../../src/raven/sinks/redis-sink.js');
type LokiModule = typeof import('../../src/raven/sinks/loki-sink.js');

export interface RunningTarget {
  /** The sink with its defaults, or with `maxBatch` set. */
  sink: (maxBatch: number | undefined) => Promise<Sink>;
  /** Changes the server holds. */
  count: () => Promise<number>;
  stop: () => Promise<void>;
}

export interface SinkTarget {
  name: string;
  start: () => Promise<RunningTarget>;
}

async function load<T>(path: string): Promise<T> {
  return (await import(new URL(path, ravenDist).href)) as T;
}

const postgres: SinkTarget = {
  name: 'postgres',
  start: async () => {
    const server = await PostgresServer.start({ durable: true });
    await server.query('CREATE DATABASE bench');
    return {
      sink: async (maxBatch) => {
        const { PostgresSink } = await load<PostgresModule>('raven/sinks/postgres-sink.js');
        return new PostgresSink({
          name: 'bench',
          connectionString: server.url('bench'),
          ...(maxBatch === undefined ? {} : { maxBatch }),
        });
      },
      count: async () =>
        (await server.query<{ n: number }>('SELECT count(*)::int AS n FROM raven_changes', [], 'bench'))[0]
          ?.n ?? 0,
      stop: () => server.stop(),
    };
  },
};

const nats: SinkTarget = {
  name: 'nats',
  start: async () => {
    const server = await NatsServer.start();
    return {
      sink: async (maxBatch) => {
        const { NatsSink } = await load<NatsModule>('raven/sinks/nats-sink.js');
        return new NatsSink({
          name: 'bench',
          servers: [server.url],
          ...(maxBatch === undefined ? {} : { maxBatch }),
        });
      },
      count: () =>
        server.using(
          async (nc) => (await (await nc.jetstreamManager()).streams.info('RAVEN')).state.messages,
        ),
      stop: () => server.stop(),
    };
  },
};

const redis: SinkTarget = {
  name: 'redis',
  start: async () => {
    const server = await RedisServer.start();
    return {
      sink: async (maxBatch) => {
        const { RedisSink } = await load<RedisModule>('raven/sinks/redis-sink.js');
        return new RedisSink({
          name: 'bench',
          url: server.url(),
          maxLen: 1_000_000,
          ...(maxBatch === undefined ? {} : { maxBatch }),
        });
      },
      count: () => server.using(0, (r) => r.xlen('raven:changes')),
      stop: () => server.stop(),
    };
  },
};

const loki: SinkTarget = {
  name: 'loki',
  start: async () => {
    const server = await LokiServer.start();
    return {
      sink: async (maxBatch) => {
        const { LokiSink } = await load<LokiModule>('raven/sinks/loki-sink.js');
        return new LokiSink({
          name: 'bench',
          url: server.url,
          ...(maxBatch === undefined ? {} : { maxBatch }),
        });
      },
      // The suite's changes are timed from ten minutes before it started, one millisecond apart.
      count: () => server.count('{watcher="bench"}', Date.now() - 3_600_000, Date.now() + 60_000),
      stop: () => server.stop(),
    };
  },
};

export function sinkTargets(): SinkTarget[] {
  return [postgres, nats, redis, loki];
}
