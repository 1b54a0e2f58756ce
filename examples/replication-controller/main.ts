/**
 * The ReplicaKeeper controller as a program. Run several copies: one leads and reconciles, the
 * others stand by. SIGINT or SIGTERM stops reconciling, releases the lease and exits 0; a second
 * signal exits 1 at once. Logs are JSON lines on stdout.
 *
 *   npx tsx examples/replication-controller/main.ts --kubeconfig <path> --namespace <ns> [options]
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { KubeClient } from '../../src/client/kube-client.js';
import { loadConfig } from '../../src/client/load-config.js';
import { RavenError } from '../../src/errors/raven-error.js';
import { isLogLevel, jsonLogger } from './json-logger.js';
import { defaultLeaseName, runController } from './run-controller.js';

const usage = `usage: main.ts [--kubeconfig PATH] [--context NAME] [--namespace NS] [options]

  --kubeconfig PATH         kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)
  --context NAME            kubeconfig context (default: the current one)
  --namespace NS            namespace of the ReplicaKeepers (default: the context's)
  --identity ID             this replica's name in the Lease (default: host-pid-random)
  --lease-namespace NS      namespace of the Lease (default: --namespace)
  --lease-name NAME         name of the Lease (default: ${defaultLeaseName})
  --lease-duration-ms N     default 15000
  --renew-deadline-ms N     default 10000 (must be below the lease duration)
  --retry-period-ms N       default 2000 (must be well below the renew deadline)
  --workers N               keepers reconciled at once (default 2)
  --skip-crd-install        do not create the ReplicaKeeper definition when it is missing
  --log-level LEVEL         debug, info, warn or error (default info)
  --help
`;

class UsageError extends Error {}

function parse(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      namespace: { type: 'string' },
      identity: { type: 'string' },
      'lease-namespace': { type: 'string' },
      'lease-name': { type: 'string' },
      'lease-duration-ms': { type: 'string' },
      'renew-deadline-ms': { type: 'string' },
      'retry-period-ms': { type: 'string' },
      workers: { type: 'string' },
      'skip-crd-install': { type: 'boolean' },
      'log-level': { type: 'string', default: 'info' },
      help: { type: 'boolean' },
    },
  });
  const level = values['log-level'];
  if (!isLogLevel(level)) throw new UsageError(`--log-level ${level}: expected debug, info, warn or error`);
  return { ...values, level };
}

function positiveInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${flag} ${value}: expected a positive integer`);
  return n;
}

async function main(argv: string[]): Promise<number> {
  let args;
  try {
    args = parse(argv);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${usage}`);
    return 2;
  }
  if (args.help === true) {
    process.stdout.write(usage);
    return 0;
  }
  const identity = args.identity ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const log = jsonLogger({ level: args.level, write: (line) => process.stdout.write(line) }).child({
    identity,
  });

  const stop = new AbortController();
  // Raven's timers never hold the process open (a library must not keep its host alive), so a
  // standby replica waiting for its next retry would otherwise just exit: the program holds itself.
  const keepAlive = setInterval(() => undefined, 60_000);
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stop.signal.aborted) {
      log.warn({ signal }, 'second signal; exiting now');
      process.exit(1);
    }
    log.info({ signal }, 'shutting down: stopping reconciles and releasing the lease');
    stop.abort(new Error(`received ${signal}`));
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);

  let client: KubeClient | undefined;
  try {
    const options = {
      workers: positiveInt('workers', args.workers),
      leaseDurationMs: positiveInt('lease-duration-ms', args['lease-duration-ms']),
      renewDeadlineMs: positiveInt('renew-deadline-ms', args['renew-deadline-ms']),
      retryPeriodMs: positiveInt('retry-period-ms', args['retry-period-ms']),
    };
    const config = await loadConfig({
      ...(args.kubeconfig === undefined ? {} : { kubeconfig: args.kubeconfig }),
      ...(args.context === undefined ? {} : { context: args.context }),
      logger: log,
    });
    client = new KubeClient(config, { logger: log });
    const namespace = args.namespace ?? client.namespace;
    log.info({ server: client.server, namespace }, 'starting');
    await runController(
      {
        client,
        namespace,
        identity,
        ...(args['lease-namespace'] === undefined ? {} : { leaseNamespace: args['lease-namespace'] }),
        ...(args['lease-name'] === undefined ? {} : { leaseName: args['lease-name'] }),
        ...definedOnly(options),
        skipCrdInstall: args['skip-crd-install'] === true,
        logger: log,
      },
      stop.signal,
    );
    log.info({}, 'stopped');
    return 0;
  } catch (err) {
    if (stop.signal.aborted && !(err instanceof RavenError && err.code === 'ERR_CONFIG')) {
      // Interrupted during start-up (e.g. while installing the definition): still a clean stop.
      log.info({}, 'stopped');
      return 0;
    }
    log.error({ err: err instanceof Error ? err.message : String(err) }, 'failed');
    return err instanceof UsageError || (err instanceof RavenError && err.code === 'ERR_CONFIG') ? 2 : 1;
  } finally {
    clearInterval(keepAlive);
    await client?.destroy();
  }
}

function definedOnly<T extends object>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
