/**
 * `npm run loki -- build`: build (or find cached) the Grafana Loki binary the Loki sink's tests and
 * benchmark run (`test/harness/loki-binary.ts`). `npm run setup` runs it after the control plane.
 */
import { ensureLoki } from '../test/harness/loki-binary.js';

const log = (line: string): void => {
  process.stderr.write(`loki: ${line}\n`);
};

async function main(command: string | undefined): Promise<number> {
  if (command !== 'build') {
    process.stderr.write('usage: npm run loki -- build\n');
    return 2;
  }
  const loki = await ensureLoki(log);
  log(`Loki ${loki.version} at ${loki.path}`);
  return 0;
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(err instanceof Error ? err.message : String(err));
    process.exit(1);
  },
);
