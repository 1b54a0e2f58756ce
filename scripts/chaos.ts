/**
 * `npm run chaos`: Raven's randomized fault-schedule checker. A seed gives a schedule of
 * operations and faults (test/chaos/schedule.ts), the schedule is made on a real control plane,
 * a real PostgreSQL checkpoint and 1 to 4 `raven run` replicas, and the checker
 * (test/chaos/checker.ts) compares the apiserver's history with what the webhook receiver got.
 *
 *   npm run chaos -- [--mode single|failover|sharded] [--seed N] [--duration SECONDS] [--report FILE]
 *
 * Prints one verdict line and the command that replays the seed; writes the JSON report
 * (default chaos-<mode>-<seed>.json). Exit status: 0 PASS, 1 FAIL or INCONCLUSIVE, 2 bad usage.
 * See docs/chaos.md.
 */
import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';
import { runChaos } from '../test/chaos/run.js';
import { MODES, type Mode } from '../test/chaos/schedule.js';

const USAGE =
  'usage: npm run chaos -- [--mode single|failover|sharded] [--seed N] [--duration SECONDS] [--report FILE]';

function usage(message: string): never {
  process.stderr.write(`chaos: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function parse(): { mode: Mode; seed: number; durationS: number; report: string } {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        mode: { type: 'string', default: 'sharded' },
        seed: { type: 'string' },
        duration: { type: 'string', default: '120' },
        report: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    usage(err instanceof Error ? err.message : String(err));
  }
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const mode = values.mode as Mode;
  if (!MODES.includes(mode)) usage(`--mode: "${values.mode}" is not one of ${MODES.join(', ')}`);
  const seed = values.seed === undefined ? randomInt(1, 1_000_000) : Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    usage(`--seed: "${values.seed}" is not a whole number from 0 to 4294967295`);
  const durationS = Number(values.duration);
  if (!Number.isFinite(durationS) || durationS < 5 || durationS > 7200)
    usage(`--duration: "${values.duration}" is not a number of seconds from 5 to 7200`);
  return { mode, seed, durationS, report: values.report ?? `chaos-${mode}-${seed}.json` };
}

const { mode, seed, durationS, report } = parse();
// Exit through process.exit, so that the harness's exit handlers stop the control plane,
// PostgreSQL and the replicas this run started.
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    process.stderr.write(`chaos: ${signal}: stopping everything this run started\n`);
    process.exit(130);
  });
const result = await runChaos({ mode, seed, durationS, reportFile: report });
process.stdout.write(`${result.verdict}\n`);
process.stdout.write(`report: ${report}\nreplay: ${result.replay}\n`);
process.exit(result.check.verdict === 'PASS' ? 0 : 1);
