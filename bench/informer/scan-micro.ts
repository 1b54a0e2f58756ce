/**
 * Micro-benchmark of a relist's decoding without the network: pages of realistic pods (as the
 * local server sends them) in 64 KiB chunks through the list decoder, or the same pods as watch
 * lines through the line splitter and decodeWatchLine, with a filter that finds every item
 * unchanged in a KnownObjects holding them all.
 *   tsx bench/informer/scan-micro.ts [items] [rounds]
 */
import { ListDecoder } from '../../src/watch/decode/decode-list.js';
import { decodeWatchLine } from '../../src/watch/decode/decode-watch-events.js';
import { LineSplitter } from '../../src/watch/decode/line-splitter.js';
import { KnownObjects } from '../../src/watch/known-objects.js';
import { metadataKey } from '../../src/client/object-key.js';
import { PodCollection } from '../lib/pod-server.js';

const items = Number(process.argv[2] ?? 20000);
const rounds = Number(process.argv[3] ?? 5);
const collection = new PodCollection({ listed: items, events: 0 });
const CHUNK = 64 * 1024;

function chunks(whole: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < whole.length; i += CHUNK) out.push(Buffer.from(whole.subarray(i, i + CHUNK)));
  return out;
}

const pages: Buffer[][] = [];
for (let from = 0; from < items; from += 500) {
  const to = Math.min(items, from + 500);
  const parts: Buffer[] = [
    Buffer.from('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":['),
  ];
  for (let i = from; i < to; i++)
    parts.push(i === from ? collection.item(i) : Buffer.concat([Buffer.from(','), collection.item(i)]));
  parts.push(Buffer.from(']}'));
  pages.push(chunks(Buffer.concat(parts)));
}
const lines = chunks(Buffer.concat(Array.from({ length: items }, (_, i) => collection.initialEvent(i))));

const known = new KnownObjects({ keepObjects: false, dropManagedFields: true });
for (let i = 0; i < items; i++) {
  const pod = JSON.parse(collection.item(i).toString()) as { metadata: { name: string; namespace: string } };
  known.set(metadataKey(pod.metadata), pod, undefined, false);
}

function paged(): number {
  let kept = 0;
  known.beginList();
  for (const page of pages) {
    const decoder = new ListDecoder({
      dropManagedFields: true,
      filter: (peek) => !known.unchanged(peek, true),
    });
    for (const chunk of page) for (const _ of decoder.push(chunk)) kept++;
    decoder.end();
  }
  return kept;
}

function streamed(): number {
  let kept = 0;
  known.beginList();
  const splitter = new LineSplitter();
  const options = {
    dropManagedFields: true,
    filter: (peek: { type: string }) => peek.type === 'BOOKMARK' || !known.unchanged(peek as never, true),
  };
  for (const chunk of lines)
    for (const line of splitter.push(chunk)) if (decodeWatchLine(line, options) !== undefined) kept++;
  return kept;
}

function parsed(): number {
  let n = 0;
  for (const page of pages)
    n += (JSON.parse(Buffer.concat(page).toString()) as { items: unknown[] }).items.length;
  return n;
}

for (const [name, run] of [
  ['paged', paged],
  ['stream', streamed],
  ['parse', parsed],
] as const) {
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t = process.cpuUsage();
    const kept = run();
    const u = process.cpuUsage(t);
    times.push((u.user + u.system) / 1000);
    if (name !== 'parse' && kept !== 0) throw new Error(`${name} kept ${kept}`);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${name}: median ${times[Math.floor(rounds / 2)]?.toFixed(0)} ms (${times.map((t) => t.toFixed(0)).join(' ')}) for ${items} items`,
  );
}
