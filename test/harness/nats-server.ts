/**
 * NATS with JetStream from Debian's `nats-server` package for the NATS sink's tests: one server on
 * 127.0.0.1 on a free port, JetStream's store in a temporary directory (kept across down/up, so a
 * restarted server has its streams and their de-duplication state).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { LocalServer } from './local-server.js';

export interface NatsServerOptions {
  /** The server's max_payload in bytes (its default is 1 MiB). */
  maxPayload?: number;
}

export class NatsServer {
  readonly server: LocalServer;
  readonly #base: string;

  private constructor(server: LocalServer, base: string) {
    this.server = server;
    this.#base = base;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.server.port}`;
  }

  static async start(options: NatsServerOptions = {}): Promise<NatsServer> {
    const base = await mkdtemp(join(tmpdir(), 'raven-test-nats-'));
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
      },
      base,
    );
    const nats = new NatsServer(server, base);
    await nats.ready();
    return nats;
  }

  /** Wait until JetStream answers (the listener opens before JetStream has recovered its streams). */
  async ready(): Promise<void> {
    for (let i = 0; ; i++) {
      try {
        await this.using(async (nc) => {
          await (await nc.jetstreamManager({ timeout: 2000 })).getAccountInfo();
        });
        return;
      } catch (err) {
        if (i > 600) throw new Error(`nats not ready: ${String(err)}\n${await this.server.log()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
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
