/**
 * Watch streams of the same pods in both encodings, served by a local node:http server. The pods
 * are the apiserver's own (a capture, see capture.ts: its managedFields, timestamps and uids),
 * encoded as the apiserver encodes them: JSON lines, or a CBOR sequence with every string a byte
 * string and each object under the self-described tag (test/harness/kube-cbor.ts). Event n
 * modifies pod n mod population with resourceVersion 1000000000 + n, so every event is a change.
 *
 * The server answers a watch from resourceVersion `start` with `events` events in 64 KiB chunks,
 * then ends; a watch from any other resourceVersion (a watcher resuming) hangs until the client
 * leaves. `Accept: application/cbor...` gets `application/cbor-seq`, anything else JSON.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { kubeCborEvent } from '../../test/harness/kube-cbor.js';

const CHUNK_BYTES = 64 * 1024;
const RV_DIGITS = 10;
const RV_BASE = 1_000_000_000;
const PLACEHOLDER = '#'.repeat(RV_DIGITS);

/** Per-pod event templates whose resourceVersion is a 10-byte placeholder at a known offset. */
interface Template {
  bytes: Buffer;
  at: number;
}

function template(bytes: Uint8Array): Template {
  const buffer = Buffer.from(bytes);
  const at = buffer.indexOf(PLACEHOLDER);
  if (at < 0) throw new Error('no resourceVersion placeholder in an event template');
  return { bytes: buffer, at };
}

export class PodStreams {
  readonly json: Template[];
  readonly cbor: Template[];

  constructor(pods: readonly Record<string, unknown>[]) {
    const withPlaceholder = pods.map((pod) => ({
      ...pod,
      metadata: { ...(pod.metadata as Record<string, unknown>), resourceVersion: PLACEHOLDER },
    }));
    this.json = withPlaceholder.map((pod) =>
      template(Buffer.from(`${JSON.stringify({ type: 'MODIFIED', object: pod })}\n`)),
    );
    this.cbor = withPlaceholder.map((pod) => template(kubeCborEvent('MODIFIED', pod)));
  }

  /** Mean bytes per event of an encoding. */
  bytesPerEvent(encoding: 'json' | 'cbor'): number {
    const all = this[encoding];
    return all.reduce((n, t) => n + t.bytes.length, 0) / all.length;
  }

  /** Event n of an encoding, as bytes. */
  event(encoding: 'json' | 'cbor', n: number): Buffer {
    const all = this[encoding];
    const t = all[n % all.length] as Template;
    const out = Buffer.from(t.bytes);
    out.write(String(RV_BASE + n), t.at, 'latin1');
    return out;
  }
}

export async function startStreamServer(
  streams: PodStreams,
  events: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const rv = url.searchParams.get('resourceVersion');
    const encoding = /application\/cbor/.test(req.headers.accept ?? '') ? 'cbor' : 'json';
    res.writeHead(200, {
      'content-type': encoding === 'cbor' ? 'application/cbor-seq' : 'application/json',
    });
    if (url.searchParams.get('watch') !== 'true' || (rv !== null && rv !== 'start')) return;
    let n = 0;
    const write = (): void => {
      while (n < events) {
        const pieces: Buffer[] = [];
        let size = 0;
        while (n < events && size < CHUNK_BYTES) {
          const piece = streams.event(encoding, n++);
          pieces.push(piece);
          size += piece.length;
        }
        if (!res.write(Buffer.concat(pieces, size))) {
          res.once('drain', write);
          return;
        }
      }
      res.end();
    };
    write();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
