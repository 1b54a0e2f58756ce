/**
 * The CBOR contestants: the same watch stream of captured pods as JSON or CBOR (streams.ts), and
 * the same captured list in both encodings. Each resolves with the number of events (or list items)
 * it decoded; the consumer only counts.
 */
import { get } from 'node:http';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { load, loadRaven, ravenClient } from '../lib/raven.js';

type CborModule = typeof import('../../src/watch/decode/cbor.js');
type SequenceModule = typeof import('../../src/watch/decode/cbor-sequence.js');
type CborListModule = typeof import('../../src/watch/decode/decode-cbor-list.js');

export interface CborTarget {
  url: string;
  kubeconfig: string;
  events: number;
  /** Directory with list.json and list.cbor (the captured list), and their repeat count. */
  dir: string;
  listRepeats: number;
  listItems: number;
}

export interface Contestant {
  name: string;
  description: string;
  expected(target: CborTarget): number;
  prepare(target: CborTarget): Promise<() => Promise<number>>;
}

const PATH = '/api/v1/pods';
const CBOR_ACCEPT = 'application/cbor, application/json;q=0.9';

/** GET the watch stream and hand each chunk to `take`, which returns the events it completed. */
function stream(url: string, accept: string, take: (chunk: Buffer) => number): Promise<number> {
  return new Promise((resolve, reject) => {
    get(`${url}${PATH}?watch=true`, { headers: { accept } }, (res) => {
      let count = 0;
      res.on('data', (chunk: Buffer) => (count += take(chunk)));
      res.on('end', () => resolve(count));
      res.on('error', reject);
    }).on('error', reject);
  });
}

const rawJson: Contestant = {
  name: 'raw-json',
  description: 'node:http GET of the JSON stream, split on newlines, JSON.parse per line (the limit)',
  expected: (t) => t.events,
  prepare: (target) =>
    Promise.resolve(() => {
      let pending = '';
      return stream(target.url, 'application/json', (chunk) => {
        pending += chunk.toString('utf8');
        let count = 0;
        let start = 0;
        for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n', start)) {
          if ((JSON.parse(pending.slice(start, nl)) as { type?: string }).type !== undefined) count++;
          start = nl + 1;
        }
        pending = pending.slice(start);
        return count;
      });
    }),
};

const rawCbor: Contestant = {
  name: 'raw-cbor',
  description: "node:http GET of the CBOR stream, Raven's CBOR sequence splitter and decoder per item",
  expected: (t) => t.events,
  prepare: async (target) => {
    const { decodeCbor } = await load<CborModule>('watch/decode/cbor.js');
    const { CborSequenceSplitter } = await load<SequenceModule>('watch/decode/cbor-sequence.js');
    return () => {
      const splitter = new CborSequenceSplitter();
      return stream(target.url, CBOR_ACCEPT, (chunk) => {
        let count = 0;
        for (const item of splitter.push(chunk)) {
          if ((decodeCbor(item.bytes) as { type?: string }).type !== undefined) count++;
        }
        return count;
      });
    };
  },
};

/**
 * cbor-x, the fastest general JavaScript CBOR library, decoding each item (framed by Raven's
 * splitter) into Maps: Kubernetes writes field names as byte strings, which cbor-x cannot make
 * object keys, and its strings stay Uint8Arrays. So this does less than the others (no text, no
 * plain objects): a lower bound for a library decoder, not a usable one.
 */
const cborX: Contestant = {
  name: 'cbor-x-maps',
  description:
    'cbor-x decoding each item into Maps of Uint8Arrays (less work than the others: no text, no objects)',
  expected: (t) => t.events,
  prepare: async (target) => {
    const require = createRequire(join(process.cwd(), 'bench', 'package.json'));
    const { Decoder } = require('cbor-x') as {
      Decoder: new (options: object) => { decode(bytes: Uint8Array): unknown };
    };
    const decoder = new Decoder({ mapsAsObjects: false, useRecords: false });
    const { CborSequenceSplitter } = await load<SequenceModule>('watch/decode/cbor-sequence.js');
    return () => {
      const splitter = new CborSequenceSplitter();
      return stream(target.url, CBOR_ACCEPT, (chunk) => {
        let count = 0;
        for (const item of splitter.push(chunk)) if (decoder.decode(item.bytes) instanceof Map) count++;
        return count;
      });
    };
  },
};

function ravenWatch(
  name: string,
  description: string,
  options: { encoding: 'json' | 'cbor'; keepObjects?: boolean },
): Contestant {
  return {
    name,
    description,
    expected: (t) => t.events,
    prepare: async (target) => {
      const raven = await loadRaven();
      const client = await ravenClient(raven, target.kubeconfig);
      return async () => {
        // Resumed at the server's start: the stream is all changes, no list.
        const watcher = raven.watch({
          transport: client,
          path: PATH,
          resume: { resourceVersion: 'start', objects: [] },
          ...options,
        });
        let count = 0;
        for await (const event of watcher) {
          if (event.type === 'error') throw event.error;
          if ((event.type === 'added' || event.type === 'modified') && ++count === target.events) break;
        }
        await client.destroy();
        return count;
      };
    },
  };
}

function list(
  name: string,
  description: string,
  file: string,
  decode: () => Promise<(bytes: Buffer) => number | Promise<number>>,
): Contestant {
  return {
    name,
    description,
    expected: (t) => t.listItems * t.listRepeats,
    prepare: async (target) => {
      const bytes = await readFile(join(target.dir, file));
      const decodeOnce = await decode();
      return async () => {
        let count = 0;
        for (let i = 0; i < target.listRepeats; i++) count += await decodeOnce(bytes);
        return count;
      };
    },
  };
}

/** A body of one chunk. */
function once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]: () => {
      let done = false;
      return {
        next: (): Promise<IteratorResult<Uint8Array>> => {
          if (done) return Promise.resolve({ done: true, value: undefined });
          done = true;
          return Promise.resolve({ done: false, value: bytes });
        },
      };
    },
  };
}

export const contestants: readonly Contestant[] = [
  rawJson,
  rawCbor,
  cborX,
  ravenWatch('raven-watch-json', 'Raven `watch()` with its defaults, JSON', { encoding: 'json' }),
  ravenWatch('raven-watch-cbor', "Raven `watch()` with its defaults, `encoding: 'cbor'`", {
    encoding: 'cbor',
  }),
  ravenWatch('raven-watch-json-nokeep', 'Raven `watch()`, `keepObjects: false`, JSON', {
    encoding: 'json',
    keepObjects: false,
  }),
  ravenWatch('raven-watch-cbor-nokeep', "Raven `watch()`, `keepObjects: false`, `encoding: 'cbor'`", {
    encoding: 'cbor',
    keepObjects: false,
  }),
  list('list-json', 'JSON.parse of the captured list body', 'list.json', () =>
    Promise.resolve((bytes) => (JSON.parse(bytes.toString('utf8')) as { items: unknown[] }).items.length),
  ),
  list('list-cbor', "Raven's CBOR list decoding of the same list", 'list.cbor', async () => {
    const { decodeCborList } = await load<CborListModule>('watch/decode/decode-cbor-list.js');
    return async (bytes) => (await decodeCborList(once(bytes))).items.length;
  }),
];

export function contestantNamed(name: string): Contestant {
  const found = contestants.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no CBOR contestant named ${name}`);
  return found;
}
