/**
 * The path of one change through `raven run`, read from a stack trace: the daemon (loaded from
 * dist/, or RAVEN_BENCH_DIST) runs in this process against the local stand-in apiserver with a
 * stdout sink whose stream captures the stack of its first write of a change. Printed: every
 * frame (innermost first), then how many frames, distinct source files, `async` frames (awaits
 * and async-generator steps V8 stitched in) and async-generator frames it crossed between the
 * socket and the sink.
 *
 * Usage: npx tsx bench/daemon/hops.ts   (after npm run build)
 */
import { Writable } from 'node:stream';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubeconfigFor } from '../decode/suite.js';
import { ravenDist } from '../lib/raven.js';
import { startChangeServer } from './change-server.js';

type DaemonModule = typeof import('../../src/raven/daemon.js');
type ConfigModule = typeof import('../../src/raven/config/load-raven-config.js');

Error.stackTraceLimit = Infinity;
const { Daemon } = (await import(new URL('raven/daemon.js', ravenDist).href)) as DaemonModule;
const { parseRavenConfig } = (await import(
  new URL('raven/config/load-raven-config.js', ravenDist).href
)) as ConfigModule;

const dir = await mkdtemp(join(tmpdir(), 'raven-hops-'));
const server = await startChangeServer({ objects: 2, changes: 1 });
await writeFile(join(dir, 'kubeconfig'), kubeconfigFor(server.url));
const config = parseRavenConfig(
  `watchers: [{ name: pods, resource: pods }]\nserver: { enabled: false }\nsinks: [{ name: out, type: stdout, format: json }]\n`,
);
const stop = new AbortController();
let stack: string | undefined;
const stdout = new Writable({
  write(chunk: Buffer, _encoding, callback) {
    if (stack === undefined && chunk.toString().includes('"modified"')) {
      stack = new Error('at the sink').stack ?? '';
      stop.abort();
    }
    callback();
  },
});
await new Daemon({ config, stdout, env: { KUBECONFIG: join(dir, 'kubeconfig') } }).run(stop.signal);
await server.close();

const root = fileURLToPath(ravenDist);
const frames = (stack ?? '')
  .split('\n')
  .slice(1)
  .map((line) => line.trim().replace(/^at /, ''))
  .filter((line) => !line.includes('node:internal') || line.startsWith('async'));
const src = fileURLToPath(new URL('../../src/', import.meta.url));
const ours = frames.filter((f) => f.includes(root) || f.includes(src));
const files = new Set(ours.map((f) => /\/(?:dist|src)\/(.*?\.[jt]s)/.exec(f)?.[1] ?? f));
const asyncFrames = ours.filter((f) => f.startsWith('async '));
const generatorFrames = ours.filter((f) =>
  /async .*(\bgenerator\b|\*|Generator|\.next|tagged|merge|decode|iterate)/i.test(f),
);
for (const f of frames) process.stdout.write(`  ${f.replace(root, '')}\n`);
process.stdout.write(
  `frames in Raven: ${ours.length}; files: ${files.size}; async frames: ${asyncFrames.length}; async-generator-like frames: ${generatorFrames.length}\nfiles: ${[...files].join(', ')}\n`,
);
