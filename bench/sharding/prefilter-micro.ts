/**
 * The pre-parse filter alone, in a process of its own: what a replica that filters by hash (the
 * server does not) spends on an event of another replica's part, against a JSON.parse of the same
 * line. The lines are the sharding saturation benchmark's (`../daemon/change-server.ts`), as
 * bytes; each is passed through `decodeWatchLine` as the watcher runs it (`dropManagedFields`, the
 * filter `inShard`), with a shard that holds none of them (every event foreign) and with the whole
 * hash space (every event the replica's own), and parsed with JSON.parse from its text. CPU per
 * event (process.cpuUsage) over every line (20 times for the filter, so a pass is not a few milliseconds), the median of
 * 10 passes after one to warm up. The same for the pods made cluster-scoped (no namespace). The
 * decoder is the built one in dist/ (or RAVEN_BENCH_DIST), as `raven run` runs it.
 *
 * Usage: prefilter-micro.ts <objects>
 */
import type * as Decode from '../../src/watch/decode/decode-watch-events.js';
import type * as Peek from '../../src/watch/decode/peek.js';
import type * as Sharding from '../../src/watch/shard/shard.js';
import { startChangeServer } from '../daemon/change-server.js';
import { reportResult } from '../lib/child.js';
import { load } from '../lib/raven.js';
import { median } from '../lib/rounds.js';

type Shard = Sharding.Shard;
// The built code, as the daemon runs it (not the sources through the test loader).
const { decodeWatchLine } = await load<typeof Decode>('watch/decode/decode-watch-events.js');
const { HASH_SPACE_END, shardTest } = await load<typeof Sharding>('watch/shard/shard.js');
const { peekFields } = await load<typeof Peek>('watch/decode/peek.js');

const objects = Number(process.argv[2] ?? '1000');
const server = await startChangeServer({ objects, changes: objects * 5 });
const texts = [...server.events()].map((text) => text.slice(0, -1));
const lines = texts.map((text) => Buffer.from(text));
// The same pods as cluster-scoped objects: the metadata's namespace removed (the first member so
// named in each line is the metadata's).
const clusterLines = texts.map((text) => Buffer.from(text.replace(/"namespace":"[^"]*",/, '')));
await server.close();

const none: Shard = { field: 'uid', range: { start: 0n, end: 1n } };
const all: Shard = { field: 'uid', range: { start: 0n, end: HASH_SPACE_END } };

/** CPU per event of `step`, over `repeat` times every line per pass (a pass of 100 ms or more). */
function perEventNs(step: (line: Buffer) => unknown, repeat = 1, of = lines): number {
  const passes: number[] = [];
  for (let pass = 0; pass < 11; pass++) {
    const before = process.cpuUsage();
    for (let r = 0; r < repeat; r++) for (const line of of) step(line);
    const used = process.cpuUsage(before);
    if (pass > 0) passes.push(((used.user + used.system) * 1000) / (lines.length * repeat));
  }
  return median(passes);
}

// As a watcher filtering by shard (and nothing else) runs its live watch: the peek reads the
// type, the shard's field and the resourceVersion.
const reads = peekFields(['uid', 'resourceVersion']);
const decodeIn = (shard: Shard) => {
  const options = { dropManagedFields: true, filter: shardTest(shard), filterReads: reads };
  return (bytes: Buffer) => decodeWatchLine({ bytes, byteOffset: 0, line: 1 }, options);
};

if (decodeIn(none)(lines[0] ?? Buffer.alloc(0)) !== undefined)
  throw new Error('a foreign event was not filtered');
if (decodeIn(all)(lines[0] ?? Buffer.alloc(0)) === undefined) throw new Error('an own event was filtered');
const parseNs = perEventNs((line) => JSON.parse(line.toString('utf8')));
const filterNs = perEventNs(decodeIn(none), 20);
const ownNs = perEventNs(decodeIn(all));
if (decodeIn(none)(clusterLines[0] ?? Buffer.alloc(0)) !== undefined)
  throw new Error('a foreign cluster-scoped event was not filtered');
const clusterParseNs = perEventNs((line) => JSON.parse(line.toString('utf8')), 1, clusterLines);
const clusterFilterNs = perEventNs(decodeIn(none), 20, clusterLines);
reportResult({ events: lines.length, parseNs, filterNs, ownNs, clusterFilterNs, clusterParseNs });
