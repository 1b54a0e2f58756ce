/**
 * Sends each change event as one RFC 5424 syslog message: over TCP or TLS with octet-counting
 * framing (RFC 6587 / RFC 5425: `<length> <message>`), or over UDP, one datagram per message
 * (RFC 5426). MSGID is the change type (`added`, `modified`, `deleted`, `gap`), the message body
 * the change event as JSON; an Event occurrence of type `Warning` has severity warning, everything
 * else notice.
 *
 * Accepted means written: over TCP and TLS `deliver` resolves once the socket has taken the
 * message (the kernel buffers it), over UDP once the datagram is sent. Syslog has no
 * acknowledgement, so a message written in the instant before the server dies can be lost
 * without Raven knowing; a server that is down or refusing is seen at once (connection refused,
 * reset) and retried. One connection is kept open and reopened after any error. Certificate
 * problems are not retryable (a retry cannot fix them); every other error is.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { hostname as osHostname } from 'node:os';
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { abortReason } from '../../util/signals.js';
import { isCertificateError } from '../../errors/classify.js';
import { SinkError } from '../../errors/raven-error.js';
import type { SinkRecord } from '../model/gap-notice.js';
import type { Sink } from './sink.js';
import { recordJson } from '../model/record-json.js';

export const SYSLOG_FACILITIES = [
  'kern',
  'user',
  'mail',
  'daemon',
  'auth',
  'syslog',
  'lpr',
  'news',
  'uucp',
  'cron',
  'authpriv',
  'ftp',
  'ntp',
  'audit',
  'alert',
  'clock',
  'local0',
  'local1',
  'local2',
  'local3',
  'local4',
  'local5',
  'local6',
  'local7',
] as const;

export type SyslogFacility = (typeof SYSLOG_FACILITIES)[number];

const SEVERITY = { warning: 4, notice: 5 } as const;

export interface SyslogSinkOptions {
  name: string;
  host: string;
  port: number;
  transport: 'tcp' | 'tls' | 'udp';
  /** For `tls`: CA certificates (PEM) to trust instead of the system's, and the name to verify. */
  ca?: string | undefined;
  serverName?: string | undefined;
  facility?: SyslogFacility;
  appName?: string;
  /** The HOSTNAME field; default this machine's host name. */
  hostname?: string;
  /** How long connecting and writing may take. */
  timeoutMs?: number;
}

/** The PRI, header and body of one record (RFC 5424, no structured data). */
export function syslogMessage(
  record: SinkRecord,
  options: { facility: SyslogFacility; appName: string; hostname: string },
): string {
  const warning = record.type !== 'gap' && record.occurrence?.type === 'Warning';
  const severity = warning ? SEVERITY.warning : SEVERITY.notice;
  const pri = SYSLOG_FACILITIES.indexOf(options.facility) * 8 + severity;
  const field = (value: string): string => (value === '' ? '-' : value.replace(/\s/g, '_'));
  return `<${pri}>1 ${record.time} ${field(options.hostname)} ${field(options.appName)} ${process.pid} ${record.type} - ${recordJson(record)}`;
}

const isAborted = (signal: AbortSignal): boolean => signal.aborted;

export class SyslogSink implements Sink {
  readonly name: string;
  readonly #options: SyslogSinkOptions;
  readonly #format: { facility: SyslogFacility; appName: string; hostname: string };
  #socket: Promise<Socket> | undefined;
  #udp: UdpSocket | undefined;

  constructor(options: SyslogSinkOptions) {
    this.name = options.name;
    this.#options = options;
    this.#format = {
      facility: options.facility ?? 'local0',
      appName: options.appName ?? 'raven',
      hostname: options.hostname ?? osHostname(),
    };
  }

  async deliver(record: SinkRecord, signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw abortReason(signal);
    const message = Buffer.from(syslogMessage(record, this.#format));
    try {
      if (this.#options.transport === 'udp') await this.#send(message);
      else await this.#write(Buffer.concat([Buffer.from(`${message.length} `), message]), signal);
    } catch (error) {
      // Aborted while writing (the check above narrowed `aborted` to false: read it afresh).
      if (isAborted(signal)) throw abortReason(signal);
      throw new SinkError(
        `syslog ${this.#options.transport}://${this.#options.host}:${this.#options.port}: ${(error as Error).message}`,
        { retryable: !isCertificateError(error), cause: error },
      );
    }
  }

  async close(): Promise<void> {
    const socket = this.#socket;
    this.#socket = undefined;
    if (socket !== undefined) {
      const s = await socket.catch(() => undefined);
      if (s !== undefined) await new Promise<void>((resolve) => s.end(resolve));
    }
    const udp = this.#udp;
    this.#udp = undefined;
    if (udp !== undefined) await new Promise<void>((resolve) => udp.close(() => resolve()));
  }

  async #write(frame: Buffer, signal: AbortSignal): Promise<void> {
    let socket = await (this.#socket ??= this.#connect());
    // The server closed its end (it is stopping): a write now would vanish unseen; reconnect.
    if (socket.destroyed || socket.readableEnded) {
      this.#drop(socket);
      socket = await (this.#socket ??= this.#connect());
    }
    await new Promise<void>((resolve, reject) => {
      const fail = (error: Error): void => {
        this.#drop(socket);
        reject(error);
      };
      const onAbort = (): void => fail(abortReason(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      socket.once('error', fail);
      socket.write(frame, (error) => {
        signal.removeEventListener('abort', onAbort);
        socket.off('error', fail);
        if (error) fail(error);
        else resolve();
      });
    });
  }

  #connect(): Promise<Socket> {
    const { host, port, transport, ca, serverName } = this.#options;
    const timeoutMs = this.#options.timeoutMs ?? 10_000;
    const pending = new Promise<Socket>((resolve, reject) => {
      const socket =
        transport === 'tls'
          ? tlsConnect({
              host,
              port,
              ...(ca === undefined ? {} : { ca }),
              // SNI carries host names only; an IP address is still verified against the certificate.
              ...(serverName !== undefined || isIP(host) === 0 ? { servername: serverName ?? host } : {}),
            })
          : netConnect({ host, port });
      socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      socket.once(transport === 'tls' ? 'secureConnect' : 'connect', () => {
        socket.setTimeout(0);
        socket.off('error', reject);
        // A server that closes or resets the connection is noticed here, before the next write.
        socket.on('error', () => this.#drop(socket));
        socket.on('close', () => this.#drop(socket));
        socket.on('end', () => this.#drop(socket));
        socket.resume();
        resolve(socket);
      });
      socket.once('error', reject);
    });
    pending.catch(() => {
      if (this.#socket === pending) this.#socket = undefined;
    });
    return pending;
  }

  #drop(socket: Socket): void {
    void this.#socket?.then(
      (current) => {
        if (current === socket) this.#socket = undefined;
      },
      () => undefined,
    );
    socket.destroy();
  }

  #send(message: Buffer): Promise<void> {
    this.#udp ??= createSocket(this.#options.host.includes(':') ? 'udp6' : 'udp4');
    const udp = this.#udp;
    return new Promise<void>((resolve, reject) =>
      udp.send(message, this.#options.port, this.#options.host, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
  }
}
