/**
 * The checker's own record of what happened: an etcd watch on the ConfigMaps' keys
 * (`/registry/configmaps/`), opened before the first operation and kept until the end.
 *
 * Why etcd and not a watch through the apiserver: the run restarts the apiserver and compacts etcd
 * on purpose, and a watch through the apiserver then answers 410 and must relist, losing exactly
 * the intermediate changes the checker must know about. A watch on etcd itself survives both (a
 * running etcd watch is not cut by a compaction), and etcd is never a target of the faults. Its
 * revision is the apiserver's resourceVersion, so each change reads as the apiserver reported it:
 * uid, resourceVersion, and `added` (first version of a key), `modified` or `deleted`.
 *
 * Values are Kubernetes' protobuf storage encoding (`k8s\0` + runtime.Unknown around the object);
 * only the ObjectMeta fields the checker needs are read: name, namespace, uid and labels.
 */
import { request, type ClientRequest } from 'node:http';

export type ChangeType = 'added' | 'modified' | 'deleted';

/** One change of one ConfigMap, as etcd recorded it. */
export interface Change {
  uid: string;
  namespace: string;
  name: string;
  resourceVersion: string;
  type: ChangeType;
  /** Labels after the change (before it, for a deletion). */
  labels: Record<string, string>;
  /** Labels before the change (undefined for a creation). */
  previousLabels?: Record<string, string>;
}

interface EtcdKv {
  key?: string;
  mod_revision?: string;
  version?: string;
  value?: string;
}

interface EtcdEvent {
  type?: 'PUT' | 'DELETE';
  kv?: EtcdKv;
  prev_kv?: EtcdKv;
}

const PREFIX = '/registry/configmaps/';

export class EtcdHistory {
  readonly changes: Change[] = [];
  /** The newest revision etcd said this watch has seen up to. */
  revision = 0n;
  /** Set when the watch failed: the history is then incomplete and the run inconclusive. */
  error: Error | undefined;
  #req: ClientRequest | undefined;
  #waiters: (() => void)[] = [];

  private constructor(readonly etcdUrl: string) {}

  /** Watch every change after `fromRevision`. */
  static start(etcdUrl: string, fromRevision: bigint): EtcdHistory {
    const history = new EtcdHistory(etcdUrl);
    history.#open(fromRevision + 1n);
    return history;
  }

  /** Resolves once the watch has seen `revision` (a safety net of `timeoutMs` rejects). */
  async caughtUp(revision: bigint, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.revision < revision) {
      if (this.error !== undefined) throw this.error;
      if (Date.now() > deadline)
        throw new Error(`the etcd watch did not reach revision ${revision} (at ${this.revision})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.#req?.destroy();
  }

  #open(start: bigint): void {
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    // The range end of a prefix: the prefix with its last byte plus one.
    const end = PREFIX.slice(0, -1) + String.fromCharCode(PREFIX.charCodeAt(PREFIX.length - 1) + 1);
    const body = JSON.stringify({
      create_request: { key: b64(PREFIX), range_end: b64(end), prev_kv: true, start_revision: String(start) },
    });
    const req = request(`${this.etcdUrl}/v3/watch`, { method: 'POST' }, (res) => {
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (line !== '') this.#message(line);
        }
      });
      res.on('error', (err) => this.#fail(err));
    });
    req.on('error', (err) => {
      if (!req.destroyed || this.error === undefined) this.#fail(err);
    });
    req.end(body);
    this.#req = req;
  }

  #message(line: string): void {
    const message = JSON.parse(line) as {
      result?: {
        header?: { revision?: string };
        events?: EtcdEvent[];
        compact_revision?: string;
        canceled?: boolean;
      };
      error?: unknown;
    };
    const result = message.result;
    if (result === undefined || message.error !== undefined) {
      this.#fail(new Error(`etcd watch: ${line}`));
      return;
    }
    if (result.canceled === true || (result.compact_revision ?? '0') !== '0') {
      this.#fail(new Error(`etcd watch was cancelled: ${line}`));
      return;
    }
    for (const event of result.events ?? []) {
      const change = toChange(event);
      if (change !== undefined) this.changes.push(change);
      const rev = BigInt(event.kv?.mod_revision ?? '0');
      if (rev > this.revision) this.revision = rev;
    }
    const header = BigInt(result.header?.revision ?? '0');
    if (header > this.revision) this.revision = header;
    this.#wake();
  }

  #fail(err: Error): void {
    this.error ??= err;
    this.#wake();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

function toChange(event: EtcdEvent): Change | undefined {
  const key = Buffer.from(event.kv?.key ?? '', 'base64').toString('utf8');
  if (!key.startsWith(PREFIX)) return undefined;
  const [namespace = '', name = ''] = key.slice(PREFIX.length).split('/');
  const resourceVersion = event.kv?.mod_revision ?? '0';
  const prev = event.prev_kv?.value === undefined ? undefined : decodeMeta(event.prev_kv.value);
  if (event.type === 'DELETE') {
    if (prev === undefined) return undefined;
    return { uid: prev.uid, namespace, name, resourceVersion, type: 'deleted', labels: prev.labels };
  }
  const now = decodeMeta(event.kv?.value ?? '');
  // A key's first version is a creation; so is a put whose uid differs from the one before.
  const created = event.kv?.version === '1' || prev === undefined || prev.uid !== now.uid;
  return {
    uid: now.uid,
    namespace,
    name,
    resourceVersion,
    type: created ? 'added' : 'modified',
    labels: now.labels,
    ...(created ? {} : { previousLabels: prev.labels }),
  };
}

/** Read the uid and labels of an object in Kubernetes' protobuf storage encoding (base64). */
export function decodeMeta(value: string): { uid: string; labels: Record<string, string> } {
  const bytes = Buffer.from(value, 'base64');
  if (bytes.subarray(0, 4).toString('latin1') !== 'k8s\0')
    throw new Error('an etcd value not in the protobuf storage encoding (no k8s\\0 prefix)');
  const raw = field(bytes.subarray(4), 2); // runtime.Unknown.raw
  const meta = raw === undefined ? undefined : field(raw, 1); // the object's metadata
  if (meta === undefined) throw new Error('an etcd value without metadata');
  const uid = field(meta, 5)?.toString('utf8') ?? '';
  const labels: Record<string, string> = {};
  for (const entry of fields(meta, 11)) {
    labels[field(entry, 1)?.toString('utf8') ?? ''] = field(entry, 2)?.toString('utf8') ?? '';
  }
  return { uid, labels };
}

function field(buf: Buffer, number: number): Buffer | undefined {
  return fields(buf, number)[0];
}

/** The length-delimited fields numbered `number` of a protobuf message (others skipped). */
function fields(buf: Buffer, number: number): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  const varint = (): number => {
    let result = 0;
    let shift = 1;
    for (;;) {
      const byte = buf[at++];
      if (byte === undefined) throw new Error('a truncated protobuf varint');
      result += (byte & 0x7f) * shift;
      if (byte < 0x80) return result;
      shift *= 128;
    }
  };
  while (at < buf.length) {
    const tag = varint();
    const wire = tag & 7;
    if (wire === 0) varint();
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const length = varint();
      if (tag >>> 3 === number) out.push(buf.subarray(at, at + length));
      at += length;
    } else throw new Error(`an unexpected protobuf wire type ${wire}`);
  }
  return out;
}

/** etcd's current revision (the newest resourceVersion of anything). */
export function etcdRevision(etcdUrl: string): Promise<bigint> {
  return new Promise((resolve, reject) => {
    const req = request(`${etcdUrl}/v3/kv/range`, { method: 'POST', timeout: 30_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        const revision = (JSON.parse(text) as { header?: { revision?: string } }).header?.revision;
        if (res.statusCode !== 200 || revision === undefined)
          reject(new Error(`etcd range: ${res.statusCode} ${text}`));
        else resolve(BigInt(revision));
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify({ key: Buffer.from('/').toString('base64') }));
  });
}
