/**
 * `npm run checks`: type-check, lint and build at the same time (each is one single-threaded
 * process, so on 2 cores they take the time of the longest, lint, instead of the sum), then
 * print each one's output as it ends, and fail if any failed. `npm test` runs it before the tests.
 */
import { spawn } from 'node:child_process';

const SCRIPTS = ['typecheck', 'lint', 'build'];

interface Outcome {
  script: string;
  code: number;
  output: string;
  seconds: number;
}

function run(script: string): Promise<Outcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
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

async function main(): Promise<number> {
  const outcomes = await Promise.all(
    SCRIPTS.map((script) =>
      run(script).then((outcome) => {
        const verdict = outcome.code === 0 ? 'passed' : `failed (exit ${outcome.code})`;
        process.stdout.write(
          `checks: ${script} ${verdict} in ${outcome.seconds.toFixed(0)} s\n${outcome.output}`,
        );
        return outcome;
      }),
    ),
  );
  const failed = outcomes.filter((o) => o.code !== 0).map((o) => o.script);
  if (failed.length > 0) process.stderr.write(`checks: failed: ${failed.join(', ')}\n`);
  return failed.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`checks: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
