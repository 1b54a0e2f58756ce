/**
 * What naming the writers of each change costs, per event, on the realistic pods of
 * `pod-fixture.ts` (7.6 KB, managedFields from three managers, about a third of the bytes), beside
 * what decoding the same event already costs (`parseBytesWithoutManagedFields`, as the watcher
 * does with `dropManagedFields`):
 *
 * - scan: reading the stamp of the managedFields entries from the bytes (every object event);
 * - modified: scan, comparing with the previous stamp, decoding the one changed entry and laying
 *   it over the change's diff paths (`changedBy`), as the daemon does for every modification.
 *
 *   npx tsx bench/decode/field-managers.ts [events]
 */
import { changedBy } from '../../src/watch/changed-by.js';
import { parseBytesWithoutManagedFields } from '../../src/watch/decode/drop-managed-fields.js';
import { changedFieldManagers, scanManagedFieldsBytes } from '../../src/watch/field-managers.js';
import { diffObjects } from '../../src/raven/model/diff.js';
import { makePod } from '../lib/pod-fixture.js';

const count = Number(process.argv[2] ?? 2000);

interface Pod {
  metadata: { managedFields: { manager: string; time: string }[] };
  status: { conditions?: { type: string; lastProbeTime?: unknown }[]; podIP?: string };
}

const before: Uint8Array[] = [];
const after: Uint8Array[] = [];
const paths: string[][] = [];
for (let i = 0; i < count; i++) {
  const pod = makePod(i) as unknown as Pod;
  const next = structuredClone(pod);
  // The kubelet writes status: its entry gets a new time, one status field changes.
  for (const entry of next.metadata.managedFields)
    if (entry.manager === 'kubelet') entry.time = '2026-03-14T09:30:00Z';
  next.status.podIP = '10.1.2.3';
  before.push(Buffer.from(JSON.stringify({ type: 'MODIFIED', object: pod })));
  after.push(Buffer.from(JSON.stringify({ type: 'MODIFIED', object: next })));
  paths.push(diffObjects(pod, next).map((d) => d.path));
}

function time(label: string, run: (i: number) => unknown): number {
  let sink = 0;
  // Warm up, then measure the best of five rounds.
  for (let i = 0; i < count; i++) if (run(i) !== undefined) sink++;
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < count; i++) if (run(i) !== undefined) sink++;
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1000 / count);
  }
  console.log(`${label.padEnd(44)} ${best.toFixed(2).padStart(8)} µs per event  (${sink > 0 ? 'ok' : '-'})`);
  return best;
}

const stamps = before.map((b) => scanManagedFieldsBytes(b, true)?.stamp);
const parse = time('decode (parseBytesWithoutManagedFields)', (i) =>
  parseBytesWithoutManagedFields(after[i] as Uint8Array, 'event'),
);
const scan = time('scan: stamp of the entries', (i) => scanManagedFieldsBytes(after[i] as Uint8Array, true));
const modified = time('modified: scan + compare + changedBy', (i) => {
  const object = parseBytesWithoutManagedFields(after[i] as Uint8Array, 'event');
  const changes = changedFieldManagers(stamps[i], scanManagedFieldsBytes(after[i] as Uint8Array, true));
  const who = changedBy(changes ?? [], paths[i] as string[], (object as { object: unknown }).object);
  if (who[0]?.manager !== 'kubelet') throw new Error(`attributed to ${JSON.stringify(who)}`);
  return who;
});
console.log(
  `scan is ${((scan / parse) * 100).toFixed(1)} % of the decode; a modification's attribution ` +
    `${(modified - parse).toFixed(2)} µs (${(((modified - parse) / parse) * 100).toFixed(1)} %)`,
);
