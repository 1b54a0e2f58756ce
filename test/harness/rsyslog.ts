/**
 * Debian's rsyslogd on loopback, for the syslog sink's tests: its own config, work directory and
 * pid file in a temporary directory; TCP and TLS (octet-counted framing) and UDP inputs on free
 * ports; every message written raw, one per line, to a file the test reads back. `stop()` and
 * `start()` again keep the same ports and file, so a test can take the server down and bring it
 * back. Installed by scripts/install-system-packages.sh (rsyslog, rsyslog-gnutls).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { generatePki } from './pki.js';
import { freePorts, freeUdpPort } from './ports.js';

/** How long to wait for rsyslogd to listen: a safety net, far above its start-up time. */
const START_MS = 60_000;

export class RsyslogServer {
  readonly dir: string;
  readonly tcpPort: number;
  readonly tlsPort: number;
  readonly udpPort: number;
  /** The CA that signed the TLS input's certificate (PEM). */
  readonly ca: string;
  #child: ChildProcess | undefined;
  #stderr = '';

  private constructor(dir: string, ports: { tcp: number; tls: number; udp: number }, ca: string) {
    this.dir = dir;
    this.tcpPort = ports.tcp;
    this.tlsPort = ports.tls;
    this.udpPort = ports.udp;
    this.ca = ca;
  }

  static async start(): Promise<RsyslogServer> {
    const dir = await mkdtemp(join(tmpdir(), 'raven-rsyslog-'));
    const pki = await generatePki(dir);
    const [tcp = 0, tls = 0] = await freePorts(2);
    const ports = { tcp, tls, udp: await freeUdpPort() };
    await writeFile(
      join(dir, 'rsyslog.conf'),
      `global(workDirectory="${dir}"
  DefaultNetstreamDriverCAFile="${pki.caCert}"
  DefaultNetstreamDriverCertFile="${pki.serverCert}"
  DefaultNetstreamDriverKeyFile="${pki.serverKey}")
module(load="imtcp" MaxSessions="100")
module(load="imudp")
input(type="imtcp" address="127.0.0.1" port="${ports.tcp}")
input(type="imtcp" address="127.0.0.1" port="${ports.tls}"
  streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon")
input(type="imudp" address="127.0.0.1" port="${ports.udp}")
template(name="raw" type="string" string="%rawmsg%\\n")
*.* action(type="omfile" file="${join(dir, 'messages.log')}" template="raw")
`,
    );
    const server = new RsyslogServer(dir, ports, await readFile(pki.caCert, 'utf8'));
    await server.begin();
    return server;
  }

  /** Start rsyslogd (again) and wait until its TCP inputs accept connections. */
  async begin(): Promise<void> {
    const child = spawn(
      'rsyslogd',
      ['-n', '-f', join(this.dir, 'rsyslog.conf'), '-i', join(this.dir, 'rsyslogd.pid')],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.#stderr += chunk));
    this.#child = child;
    const deadline = Date.now() + START_MS;
    for (const port of [this.tcpPort, this.tlsPort]) {
      while (!(await accepts(port))) {
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`rsyslogd did not start listening on ${port}:\n${this.#stderr}`);
        await delay(50);
      }
    }
  }

  /** Stop rsyslogd (SIGTERM: it writes what it has, then exits). */
  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  /** Every message received so far, as sent (without the framing). */
  async messages(): Promise<string[]> {
    const text = await readFile(join(this.dir, 'messages.log'), 'utf8').catch(() => '');
    return text.split('\n').filter((line) => line !== '');
  }

  stderr(): string {
    return this.#stderr;
  }

  async close(): Promise<void> {
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
