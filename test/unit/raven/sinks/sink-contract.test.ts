/**
 * Every sink against the shared contract (`sink-contract.ts`).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after } from 'node:test';
import { Agent } from 'undici';
import { ChatSink } from '../../../../src/raven/sinks/chat-sink.js';
import { CloudEventsSink } from '../../../../src/raven/sinks/cloudevents-sink.js';
import { FileSink } from '../../../../src/raven/sinks/file-sink.js';
import type { Sink } from '../../../../src/raven/sinks/sink.js';
import { StdoutSink } from '../../../../src/raven/sinks/stdout-sink.js';
import { WebhookSink } from '../../../../src/raven/sinks/webhook-sink.js';
import { HttpReceiver, type Answer } from '../../../harness/http-receiver.js';
import { sinkContract, type SinkUnderTest } from './sink-contract.js';
import { SyslogSink, type SyslogSinkOptions } from '../../../../src/raven/sinks/syslog-sink.js';
import { RsyslogServer } from '../../../harness/rsyslog.js';
import { sampleEvent } from './fixtures.js';
import { EmailSink, type EmailSinkOptions } from '../../../../src/raven/sinks/email-sink.js';
import { EximServer } from '../../../harness/exim-server.js';
import { until } from '../../../harness/until.js';

const dispatcher = new Agent();
after(() => dispatcher.close());

function collecting(fail?: Error): { stream: Writable; chunks: string[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string, _encoding, callback) {
      if (fail !== undefined) {
        callback(fail);
        return;
      }
      chunks.push(chunk);
      callback();
    },
  });
  return { stream, chunks };
}

sinkContract('stdout', {
  healthy: () => {
    const { stream, chunks } = collecting();
    return Promise.resolve({
      sink: new StdoutSink({ name: 'out', stream, format: 'json' }),
      received: () => Promise.resolve([...chunks]),
      cleanup: () => Promise.resolve(),
    });
  },
  transient: () => {
    const { stream } = collecting(Object.assign(new Error('write EAGAIN'), { code: 'EAGAIN' }));
    return Promise.resolve({
      sink: new StdoutSink({ name: 'out', stream }),
      received: () => Promise.resolve([]),
      cleanup: () => Promise.resolve(),
    });
  },
  permanent: () => {
    const { stream } = collecting();
    stream.destroy();
    return Promise.resolve({
      sink: new StdoutSink({ name: 'out', stream }),
      received: () => Promise.resolve([]),
      cleanup: () => Promise.resolve(),
    });
  },
});

async function fileSink(blocked: boolean): Promise<SinkUnderTest> {
  const dir = await mkdtemp(join(tmpdir(), 'raven-contract-'));
  // A regular file where the sink's directory should be: ENOTDIR until someone fixes it.
  if (blocked) await writeFile(join(dir, 'blocked'), '');
  const path = blocked ? join(dir, 'blocked', 'events.jsonl') : join(dir, 'events.jsonl');
  return {
    sink: new FileSink({ name: 'file', path }),
    received: async () => {
      const text = await readFile(path, 'utf8').catch(() => '');
      return text.split('\n').filter((line) => line !== '');
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

sinkContract('file', {
  healthy: () => fileSink(false),
  transient: () => fileSink(true),
  permanent: {
    skip: 'every file-system error may clear (space freed, permissions fixed), so the file sink never refuses for good',
  },
});

async function httpSink(make: (url: string) => Sink, answer?: Answer): Promise<SinkUnderTest> {
  const receiver = await HttpReceiver.start();
  if (answer !== undefined) receiver.fallback = answer;
  return {
    sink: make(receiver.url('/in/secret-token')),
    received: () => Promise.resolve(receiver.requests.map((r) => r.raw)),
    cleanup: () => receiver.close(),
  };
}

function httpContract(name: string, make: (url: string) => Sink): void {
  sinkContract(name, {
    healthy: () => httpSink(make),
    transient: () => httpSink(make, { status: 503, body: 'try later' }),
    permanent: () => httpSink(make, { status: 400, body: 'bad request' }),
  });
}

httpContract('webhook', (url) => new WebhookSink({ name: 'hook', url, secret: 's', dispatcher }));
httpContract(
  'cloudevents',
  (url) => new CloudEventsSink({ name: 'ce', url, source: '/raven/test', dispatcher }),
);
for (const platform of ['slack', 'mattermost', 'teams', 'discord'] as const)
  httpContract(`${platform} chat`, (url) => new ChatSink({ name: 'chat', platform, url, dispatcher }));

/**
 * Syslog against Debian's rsyslogd (test/harness/rsyslog.ts). What arrived is read up to a marker
 * sent through the same sink (so on the same connection, after everything the test sent).
 */
const rsyslog = await RsyslogServer.start();
after(() => rsyslog.close());

async function syslogSink(options: Partial<SyslogSinkOptions> = {}): Promise<SinkUnderTest> {
  const before = (await rsyslog.messages()).length;
  const sink = new SyslogSink({
    name: 'syslog',
    host: '127.0.0.1',
    port: rsyslog.tcpPort,
    transport: 'tcp',
    ...options,
  });
  const marker = `marker-${String(before)}-${String(Math.random()).slice(2)}`;
  return {
    sink,
    received: async () => {
      await sink.deliver(sampleEvent({ name: marker }), new AbortController().signal);
      let got: string[] = [];
      await until(
        `the marker through $rsyslog`,
        async () => {
          const all = (await rsyslog.messages()).slice(before);
          const end = all.findIndex((m) => m.includes(marker));
          got = all.slice(0, end);
          return end >= 0;
        },
        { everyMs: 20 },
      );
      return got;
    },
    cleanup: () => Promise.resolve(),
  };
}

sinkContract('syslog', {
  healthy: () => syslogSink(),
  // Nothing listens on the UDP port's number over TCP: connection refused, as when rsyslogd is down.
  transient: () => syslogSink({ port: rsyslog.udpPort }),
  // A TLS server whose certificate no trusted CA signed: a retry cannot fix it.
  permanent: () => syslogSink({ port: rsyslog.tlsPort, transport: 'tls' }),
});

/**
 * E-mail through Debian's Exim (test/harness/exim-server.ts): STARTTLS and AUTH as a submission
 * server asks. What arrived is read up to a marker mail sent through the same sink after
 * everything the test sent, in the order Exim accepted the mails.
 */
const exim = await EximServer.start();
after(() => exim.close());

async function emailSink(options: Partial<EmailSinkOptions> = {}): Promise<SinkUnderTest> {
  const before = (await exim.messages()).length;
  const sink = new EmailSink({
    name: 'mail',
    host: '127.0.0.1',
    port: exim.port,
    ca: exim.ca,
    username: exim.username,
    password: exim.password,
    from: 'Raven <raven@example.org>',
    to: ['oncall@example.org'],
    ...options,
  });
  const marker = `marker-${String(before)}-${String(Math.random()).slice(2)}`;
  return {
    sink,
    received: async () => {
      await sink.deliver(sampleEvent({ name: marker }), new AbortController().signal);
      let got: string[] = [];
      await until(
        `the marker through $exim`,
        async () => {
          const all = (await exim.messages()).slice(before);
          const end = all.findIndex((m) => m.includes(marker));
          got = all.slice(0, end);
          return end >= 0;
        },
        { everyMs: 20 },
      );
      return got;
    },
    cleanup: () => Promise.resolve(),
  };
}

sinkContract('email', {
  healthy: () => emailSink(),
  // A port nothing listens on: connection refused, as when the MTA is down.
  transient: async () => {
    const closed = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as AddressInfo;
        srv.close(() => resolve(port));
      });
    });
    return emailSink({ port: closed });
  },
  // The server refuses the password (535): a retry cannot fix it.
  permanent: () => emailSink({ password: 'not-the-password' }),
});
