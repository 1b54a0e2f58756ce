/**
 * Debian's Exim (exim4-daemon-light) on loopback, for the e-mail sink's tests: its own config,
 * spool, logs and pid file in a temporary directory; one port offering STARTTLS and one speaking
 * TLS from the first byte (certificates from the harness PKI); AUTH PLAIN and LOGIN offered only
 * over TLS, and a recipient accepted only from an authenticated client; every message, to any
 * domain, for the local parts in {@link MAILBOXES}, delivered to a maildir per local part
 * (`oncall@...` to `maildir/oncall`) that the test reads back. `stop()` and `begin()` again keep the
 * same ports, spool and maildir, so a test can take the server down and bring it back. Installed
 * by scripts/install-system-packages.sh (exim4-daemon-light).
 *
 * Run as root (CI), Exim receives and delivers as the Debian-exim user (it never delivers as
 * root); run as another user, Exim gives up its privileges for a config of its own (`-C`) and
 * does everything as that user.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { generatePki } from './pki.js';
import { freePorts } from './ports.js';

/** How long to wait for Exim to listen: a safety net, far above its start-up time. */
/** How long accepted mail may take to reach the maildirs before the harness gives up (not a test verdict). */
const SETTLE_SAFETY_NET_MS = 180_000;
const START_MS = 60_000;

const EXIM = '/usr/sbin/exim4';

/**
 * The local parts mail is delivered for (any domain), each to a maildir of its name. A list, not
 * any local part: Exim will not build a path from an address as the sender wrote it (tainted data);
 * the matched list item is its own, clean value.
 */
export const MAILBOXES = ['oncall', 'audit', 'ops'] as const;

export class EximServer {
  readonly dir: string;
  /** Plain SMTP that offers STARTTLS (as a submission port does). */
  readonly port: number;
  /** TLS from the first byte (as port 465 does). */
  readonly tlsPort: number;
  /** The CA that signed the server's certificate (PEM). */
  readonly ca: string;
  readonly username = 'raven';
  readonly password = 'mail-secret';
  #child: ChildProcess | undefined;
  #stderr = '';

  private constructor(dir: string, ports: { port: number; tlsPort: number }, ca: string) {
    this.dir = dir;
    this.port = ports.port;
    this.tlsPort = ports.tlsPort;
    this.ca = ca;
  }

  static async start(): Promise<EximServer> {
    const dir = await mkdtemp(join(tmpdir(), 'raven-exim-'));
    await chmod(dir, 0o755);
    const pki = await generatePki(dir);
    const [port = 0, tlsPort = 0] = await freePorts(2);
    const ports = { port, tlsPort };
    const root = process.getuid?.() === 0;
    const user = root ? 'Debian-exim' : userInfo().username;
    for (const sub of ['spool', 'log', 'maildir']) await mkdir(join(dir, sub));
    const server = new EximServer(dir, ports, await readFile(pki.caCert, 'utf8'));
    await writeFile(join(dir, 'exim.conf'), server.#config(user, pki));
    if (root) {
      // Exim reads the key and writes spool, logs and mail as its own user.
      const { uid, gid } = await ownerOf(user);
      for (const path of ['spool', 'log', 'maildir', pki.serverKey, pki.serverCert])
        await chown(path.startsWith('/') ? path : join(dir, path), uid, gid);
    }
    await server.begin();
    return server;
  }

  #config(user: string, pki: { serverCert: string; serverKey: string }): string {
    const { dir } = this;
    return `primary_hostname = mail.raven.test
exim_user = ${user}
exim_group = ${user}
spool_directory = ${join(dir, 'spool')}
log_file_path = ${join(dir, 'log')}/%slog
pid_file_path = ${join(dir, 'exim.pid')}
keep_environment =
daemon_smtp_ports = ${this.port} : ${this.tlsPort}
tls_on_connect_ports = ${this.tlsPort}
local_interfaces = 127.0.0.1
host_lookup =
rfc1413_hosts =
tls_certificate = ${pki.serverCert}
tls_privatekey = ${pki.serverKey}
tls_advertise_hosts = *
auth_advertise_hosts = \${if eq{$tls_in_cipher}{}{}{*}}
acl_smtp_rcpt = acl_rcpt

begin acl
acl_rcpt:
  deny message = authentication required
       !authenticated = *
  accept

begin routers
everyone:
  driver = accept
  local_parts = ${MAILBOXES.join(' : ')}
  transport = to_maildir

begin transports
to_maildir:
  driver = appendfile
  directory = ${join(dir, 'maildir')}/$local_part_data
  create_directory
  maildir_format
  user = ${user}
  envelope_to_add
  return_path_add

begin retry
* * F,1h,10s

begin authenticators
plain:
  driver = plaintext
  public_name = PLAIN
  server_prompts = :
  server_condition = \${if and {{eq{$auth2}{${this.username}}}{eq{$auth3}{${this.password}}}}}
  server_set_id = $auth2
login:
  driver = plaintext
  public_name = LOGIN
  server_prompts = Username:: : Password::
  server_condition = \${if and {{eq{$auth1}{${this.username}}}{eq{$auth2}{${this.password}}}}}
  server_set_id = $auth1
`;
  }

  /** Start Exim (again) in the foreground and wait until both ports accept connections. */
  async begin(): Promise<void> {
    // -bdf: daemon in the foreground; -q10s: a queue run every 10 s delivers what was deferred.
    // A process group of its own: the daemon forks a process per SMTP connection, and a server
    // going down must take those down too (a pooled client would otherwise keep talking to them).
    const child = spawn(EXIM, ['-C', join(this.dir, 'exim.conf'), '-bdf', '-q10s'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.#stderr += chunk));
    this.#child = child;
    const deadline = Date.now() + START_MS;
    for (const port of [this.port, this.tlsPort]) {
      while (!(await accepts(port))) {
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`exim did not start listening on ${port}:\n${await this.logs()}`);
        await delay(50);
      }
    }
  }

  /**
   * Take the server down: SIGTERM to the daemon and every process it forked (open SMTP sessions,
   * queue runs, deliveries), and wait until all are gone. A message Exim accepted is in its spool
   * and is delivered by the next queue run after {@link begin}; one cut off mid-transfer was not
   * accepted, and the client sees the failure.
   */
  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (child?.pid === undefined) return;
    const group = -child.pid;
    try {
      process.kill(group, 'SIGTERM');
    } catch {
      return; // the group is gone already
    }
    for (;;) {
      try {
        process.kill(group, 0);
      } catch {
        return;
      }
      await delay(50);
    }
  }

  /**
   * Every message delivered to `mailbox` (a local part) so far, raw RFC 5322 text, in the order Exim accepted them: deliveries
   * run in processes of their own and can finish out of order, so the order is that of the
   * "<=" (received) lines in Exim's log, found by the Exim id each message's Received header names.
   */
  async messages(mailbox = 'oncall'): Promise<string[]> {
    const received = await this.#settled();
    const out: { at: number; text: string }[] = [];
    for (const sub of ['new', 'cur']) {
      const folder = join(this.dir, 'maildir', mailbox, sub);
      const names = await readdir(folder).catch(() => [] as string[]);
      for (const name of names) {
        const text = await readFile(join(folder, name), 'utf8');
        // `id 1xVtbV-0007ml-2O;` in the Received header: the id ends before the `;`.
        const id = /^Received:[^]*?\bid ([^\s;]+)/m.exec(text)?.[1];
        const at = id === undefined ? undefined : received.get(id);
        if (at === undefined)
          throw new Error(`a delivered message (${name}) has no reception in Exim's log (id ${String(id)})`);
        out.push({ at, text });
      }
    }
    return out.sort((a, b) => a.at - b.at).map((m) => m.text);
  }

  /**
   * The ids of the messages Exim accepted, in the order it accepted them (its log's `<=` lines),
   * once each of them is `Completed`: a delivery runs in a process of its own, so a message can be
   * accepted and not yet in the maildir, and a reader would see a later message without it. A
   * message deferred while the server was down completes at a later queue run (every 10 s).
   */
  async #settled(): Promise<Map<string, number>> {
    const deadline = Date.now() + SETTLE_SAFETY_NET_MS;
    for (;;) {
      const received = new Map<string, number>();
      const completed = new Set<string>();
      for (const line of (await this.#log('mainlog')).split('\n')) {
        const accepted = / (\S+) <= /.exec(line)?.[1];
        if (accepted !== undefined && !received.has(accepted)) received.set(accepted, received.size);
        const done = / (\S+) Completed$/.exec(line)?.[1];
        if (done !== undefined) completed.add(done);
      }
      const pending = [...received.keys()].filter((id) => !completed.has(id));
      if (pending.length === 0) return received;
      // A safety net for a broken setup, far beyond any delivery on a loaded machine.
      if (Date.now() > deadline)
        throw new Error(
          `Exim accepted ${pending.join(', ')} but never completed them:\n${await this.logs()}`,
        );
      await delay(50);
    }
  }

  /** Exim's main and panic logs, and what it printed. */
  async logs(): Promise<string> {
    return `${await this.#log('mainlog')}${await this.#log('paniclog')}${this.#stderr}`;
  }

  #log(name: string): Promise<string> {
    return readFile(join(this.dir, 'log', name), 'utf8').catch(() => '');
  }

  async close(): Promise<void> {
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }
}

async function ownerOf(user: string): Promise<{ uid: number; gid: number }> {
  const line = (await readFile('/etc/passwd', 'utf8')).split('\n').find((l) => l.startsWith(`${user}:`));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) throw new Error(`no user ${user} in /etc/passwd`);
  return { uid: Number(uid), gid: Number(gid) };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** One change as a mail's body shows it: its headline and change id. */
export interface MailedChange {
  /** `<time> <type> <Kind> <namespace/name>`, as the body's first line of the change. */
  headline: string;
  id: string;
}

export interface ReadMail {
  subject: string;
  messageId: string;
  to: string;
  text: string;
  changes: MailedChange[];
}

/** Parse a delivered message (mailparser decodes the MIME) and find the changes in its body. */
export async function readMail(raw: string): Promise<ReadMail> {
  const { simpleParser } = await import('mailparser');
  const mail = await simpleParser(raw);
  const text = mail.text ?? '';
  const changes: MailedChange[] = [];
  let headline = '';
  for (const line of text.split('\n')) {
    if (/^\d{4}-\d\d-\d\dT/.test(line)) headline = line;
    const id = /^ {4}change id: (\S+)$/.exec(line)?.[1];
    if (id !== undefined) changes.push({ headline, id });
  }
  const to = Array.isArray(mail.to) ? mail.to.map((a) => a.text).join(', ') : (mail.to?.text ?? '');
  return { subject: mail.subject ?? '', messageId: mail.messageId ?? '', to, text, changes };
}
