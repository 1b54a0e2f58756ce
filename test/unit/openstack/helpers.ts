/** Shared setup for the OpenStack client tests: a client on a fake clock with captured logs. */
import { FakeClock } from '../../../src/testing/fake-clock.js';
import type { Logger } from '../../../src/util/logger.js';
import { createOpenStackClient, type OpenStackClient } from '../../../src/openstack/openstack-client.js';

export interface LogRecord {
  level: string;
  obj: object;
  msg: string | undefined;
}

/** A logger that keeps every record, to check what is (and is not) logged. */
export function captureLogger(records: LogRecord[] = []): Logger & { records: LogRecord[] } {
  const make = (bindings: object): Logger & { records: LogRecord[] } => {
    const log =
      (level: string) =>
      (obj: object, msg?: string): void => {
        records.push({ level, obj: { ...bindings, ...obj }, msg });
      };
    return {
      records,
      debug: log('debug'),
      info: log('info'),
      warn: log('warn'),
      error: log('error'),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  return make({});
}

export interface TestClient {
  client: OpenStackClient;
  clock: FakeClock;
  logger: ReturnType<typeof captureLogger>;
}

/** A client on a fake clock with no jitter (random() = 0, so each retry waits half its cap). */
export function testClient(config: Record<string, unknown>): TestClient {
  const clock = new FakeClock(Date.parse('2025-01-01T00:00:00Z'));
  const logger = captureLogger();
  const client = createOpenStackClient(config, { clock, logger, random: () => 0 });
  return { client, clock, logger };
}

/** A noauth client pointed at `url` (Neutron under /network, Octavia under /lb). */
export function noauthClient(url: string, extra: Record<string, unknown> = {}): TestClient {
  return testClient({
    auth: { type: 'noauth', projectId: 'p-noauth' },
    endpoints: { network: `${url}/network`, loadBalancer: `${url}/lb` },
    ...extra,
  });
}
