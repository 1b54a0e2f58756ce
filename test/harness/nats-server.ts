/**
 * NATS with JetStream from Debian's `nats-server` package for the NATS sink's tests: one server on
 * 127.0.0.1 on a free port, JetStream's store in a temporary directory (kept across down/up, so a
 * restarted server has its streams and their de-duplication state).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { LocalServer, serverDir, TestServer } from './local-server.js';

export interface NatsServerOptions {
  /** The server's max_payload in bytes (its default is 1 MiB). */
  maxPayload?: number;
}

export class NatsServer extends TestServer {
  get url(): string {
    return `nats://127.0.0.1:${this.server.port}`;
  }

  static async start(options: NatsServerOptions = {}): Promise<NatsServer> {
    const base = await serverDir('nats');
    const config = join(base, 'nats.conf');
    await writeFile(
      config,
      [
        `jetstream { store_dir: "${join(base, 'jetstream')}" }`,
        ...(options.maxPayload === undefined ? [] : [`max_payload: ${options.maxPayload}`]),
        '',
      ].join('\n'),
    );
    const server = await LocalServer.start(
      {
        name: 'nats',
        argv: (port) => ['nats-server', '-c', config, '-a', '127.0.0.1', '-p', String(port)],
        // The listener opens before JetStream has recovered its streams.
        ready: async (port) => {
          const nc = await connect({ servers: `nats://127.0.0.1:${port}`, reconnect: false });
          try {
            await (await nc.jetstreamManager({ timeout: 2000 })).getAccountInfo();
          } finally {
            await nc.close();
          }
        },
      },
      base,
    );
    return new NatsServer(server);
  }

  /** Run `body` with a connection of its own. */
  async using<T>(body: (nc: NatsConnection) => Promise<T>): Promise<T> {
    const nc = await connect({ servers: this.url, reconnect: false });
    try {
      return await body(nc);
    } finally {
      await nc.close();
    }
  }

  /** Every message of `stream`, oldest first: subject, headers and JSON body. */
  async messages(stream: string): Promise<{ subject: string; msgId: string | undefined; json: unknown }[]> {
    return this.using(async (nc) => {
      const jsm = await nc.jetstreamManager();
      let info;
      try {
        info = await jsm.streams.info(stream);
      } catch {
        return [];
      }
      const out: { subject: string; msgId: string | undefined; json: unknown }[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
        const m = await jsm.streams.getMessage(stream, { seq });
        out.push({ subject: m.subject, msgId: m.header.get('Nats-Msg-Id') || undefined, json: m.json() });
      }
      return out;
    });
  }
}
