/**
 * `tsx scripts/parallel.ts [--stream] SCRIPT...`: run npm scripts at the same time and fail if any
 * failed. A SCRIPT with spaces is a script and its arguments: 'cluster build' runs
 * `npm run cluster -- build`.
 *
 * Without --stream each one's output is held and printed whole as it ends (`npm run checks`:
 * type-check, lint and build, each a single-threaded process, so on 2 cores they take the time of
 * the longest instead of the sum). With --stream lines are printed as they come (`npm run setup`:
 * the Go builds, which take minutes and say what they do as they go).
 */
import { spawn } from 'node:child_process';

interface Outcome {
  script: string;
  code: number;
  output: string;
  seconds: number;
}

function run(script: string, stream: boolean): Promise<Outcome> {
  const started = Date.now();
  const [name = '', ...args] = script.split(' ').filter((s) => s !== '');
  const argv = ['run', '--silent', name, ...(args.length > 0 ? ['--', ...args] : [])];
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let partial = '';
    const take = (chunk: Buffer): void => {
      if (!stream) {
        chunks.push(chunk);
        return;
      }
      // Whole lines only, so two scripts' lines never interleave mid-line.
      const text = partial + chunk.toString();
      const end = text.lastIndexOf('\n') + 1;
      process.stdout.write(text.slice(0, end));
      partial = text.slice(end);
    };
    const child = spawn('npm', argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const done = (code: number): void => {
      if (partial !== '') process.stdout.write(`${partial}\n`);
      resolve({
        script,
        code,
        output: Buffer.concat(chunks).toString(),
        seconds: (Date.now() - started) / 1000,
      });
    };
    child.on('error', (err) => {
      take(Buffer.from(`${err.message}\n`));
      done(1);
    });
    child.on('close', (code, signal) => done(code ?? (signal ? 1 : 0)));
  });
}

async function main(argv: string[]): Promise<number> {
  const stream = argv.includes('--stream');
  const scripts = argv.filter((a) => a !== '--stream');
  if (scripts.length === 0) {
    process.stderr.write('usage: tsx scripts/parallel.ts [--stream] SCRIPT...\n');
    return 2;
  }
  const outcomes = await Promise.all(
    scripts.map((script) =>
      run(script, stream).then((outcome) => {
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
