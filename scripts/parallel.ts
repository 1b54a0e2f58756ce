/**
 * `tsx scripts/parallel.ts SCRIPT...`: run npm scripts at the same time, print each one's output
 * whole as it ends, and fail if any failed. A SCRIPT with spaces is a script and its arguments:
 * 'cluster status' runs `npm run cluster -- status`.
 *
 * `npm run checks` runs type-check, lint and build this way: each is one single-threaded process,
 * so on 2 cores they take the time of the longest, lint, instead of the sum.
 */
import { spawn } from 'node:child_process';

interface Outcome {
  script: string;
  code: number;
  output: string;
  seconds: number;
}

function run(script: string): Promise<Outcome> {
  const started = Date.now();
  const [name = '', ...args] = script.split(' ').filter((s) => s !== '');
  const argv = ['run', '--silent', name, ...(args.length > 0 ? ['--', ...args] : [])];
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const child = spawn('npm', argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    const done = (code: number): void => {
      resolve({
        script,
        code,
        output: Buffer.concat(chunks).toString(),
        seconds: (Date.now() - started) / 1000,
      });
    };
    child.on('error', (err) => {
      chunks.push(Buffer.from(`${err.message}\n`));
      done(1);
    });
    child.on('close', (code, signal) => done(code ?? (signal ? 1 : 0)));
  });
}

async function main(scripts: string[]): Promise<number> {
  if (scripts.length === 0) {
    process.stderr.write('usage: tsx scripts/parallel.ts SCRIPT...\n');
    return 2;
  }
  const outcomes = await Promise.all(
    scripts.map((script) =>
      run(script).then((outcome) => {
        const verdict = outcome.code === 0 ? 'passed' : `failed (exit ${outcome.code})`;
        process.stdout.write(
          `parallel: ${script} ${verdict} in ${outcome.seconds.toFixed(0)} s\n${outcome.output}`,
        );
        return outcome;
      }),
    ),
  );
  const failed = outcomes.filter((o) => o.code !== 0).map((o) => o.script);
  if (failed.length > 0) process.stderr.write(`parallel: failed: ${failed.join(', ')}\n`);
  return failed.length > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`parallel: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
