/**
 * One recovery contestant in its own process (started by suite.ts, killed by it when a scenario
 * ends): client.ts <contestant> <kubeconfig> <namespace>
 *
 * It prints one line per observation on stdout, stamped with this process's wall clock
 * (Date.now(), the same clock the suite stamps its writes and faults with):
 *   EV {"t":"ready","at":...}           the contestant has listed and is watching
 *   EV {"t":"saw","seq":N,"at":...}     its handler received the ticker ConfigMap at data.seq = N
 * A ref'ed timer holds the process, so it never ends on its own during an outage whatever the
 * contestant's timers do; whether a plain script is held by the watcher is a test's business.
 */
import { contestantNamed, type Observer } from './contestants.js';
import { TICKER } from './ticker.js';

function emit(line: object): void {
  process.stdout.write(`EV ${JSON.stringify(line)}\n`);
}

function fail(err: unknown): void {
  const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`${message}\n`, () => process.exit(1));
}

async function main(): Promise<void> {
  const [name = '', kubeconfig = '', namespace = ''] = process.argv.slice(2);
  const contestant = contestantNamed(name);
  setInterval(() => undefined, 60_000);
  let ready = false;
  const observer: Observer = {
    ready: () => {
      if (ready) return;
      ready = true;
      emit({ t: 'ready', at: Date.now() });
    },
    saw: (object) => {
      const { metadata, data } = object as { metadata?: { name?: string }; data?: { seq?: string } };
      if (metadata?.name !== TICKER || data?.seq === undefined) return;
      emit({ t: 'saw', seq: Number(data.seq), at: Date.now() });
    },
    fail,
  };
  await contestant.start({ kubeconfig, namespace }, observer);
}

main().catch(fail);
