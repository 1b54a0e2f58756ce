/**
 * The faults, each run against a fresh set of contestants that are all watching: what is done to
 * the connections or the apiserver, when the server answers again (the recovery point), and what
 * is measured from there. Times are wall-clock milliseconds (Date.now()), the clock the
 * contestants stamp their sightings with.
 *
 * "Resumed" is the first time a contestant's handler receives a change whose write was sent at or
 * after the recovery point (see ticker.ts); the ticker is poked at the recovery point, so the
 * figure is not quantised by its 200 ms period.
 */
import type { ControlPlane } from '../../test/harness/control-plane.js';
import type { TcpProxy } from '../../test/harness/tcp-proxy.js';
import type { ClientProcess } from './client-process.js';
import type { Ticker } from './ticker.js';

/** What a scenario measured for one contestant in one run. Seconds; undefined: not within the cap. */
export interface Measured {
  resumedS: number | undefined;
  /** Half-open stall only: the client gave up on a held connection or opened a new one. */
  detectedS?: number | undefined;
  /** Connection attempts the proxy saw per minute of the outage (proxied outages only). */
  attemptsPerMinute?: number;
}

export interface FaultContext {
  plane: ControlPlane;
  ticker: Ticker;
  clients: readonly ClientProcess[];
  /** The contestant's own proxy, by contestant name (proxied scenarios only). */
  proxies: ReadonlyMap<string, TcpProxy>;
  /** How long to wait for every contestant to resume. */
  capMs: number;
  log: (line: string) => void;
}

export interface Scenario {
  id: string;
  /** Through a proxy per contestant (else straight to the apiserver). */
  proxied: boolean;
  /** Run the fault and measure; resolves per contestant name. */
  run(ctx: FaultContext): Promise<Map<string, Measured>>;
}

/** Length of the refusal window before the extra reset, as in the report. */
export const REFUSAL_MS = 15_000;
/** The extra reset comes this long after the server accepts again: it catches early reconnects. */
export const LAST_RESET_AFTER_MS = 3_000;
export const OUTAGE_MS = 60_000;
/** Downtime of the apiserver restart, as in the tour test. */
export const RESTART_DOWN_MS = 20_000;

const POLL_MS = 50;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Poll until every client (still alive) has resumed after `from`, or the cap. Seconds per client. */
async function resumedAfter(ctx: FaultContext, from: number): Promise<Map<string, number | undefined>> {
  const resumed = new Map<string, number | undefined>();
  const sentAt = (seq: number): number | undefined => ctx.ticker.sentAt(seq);
  for (;;) {
    for (const client of ctx.clients) {
      if (resumed.get(client.name) !== undefined) continue;
      const at = client.firstChangeMadeAfter(from, sentAt);
      resumed.set(client.name, at === undefined ? undefined : (at - from) / 1000);
    }
    const waiting = ctx.clients.filter((c) => resumed.get(c.name) === undefined && c.exited === undefined);
    if (waiting.length === 0 || Date.now() - from >= ctx.capMs) return resumed;
    await sleep(POLL_MS);
  }
}

function proxyOf(ctx: FaultContext, name: string): TcpProxy {
  const proxy = ctx.proxies.get(name);
  if (proxy === undefined) throw new Error(`no proxy for ${name}`);
  return proxy;
}

const attempts = (proxy: TcpProxy): number => proxy.connections + proxy.refused;

/** Refuse (reset) or close the port, cut what is open, wait, answer again, one more reset. */
function refusalThenReset(id: string, how: 'reset' | 'closed-port'): Scenario {
  return {
    id,
    proxied: true,
    run: async (ctx) => {
      const proxies = [...ctx.proxies.values()];
      for (const proxy of proxies) {
        if (how === 'reset') proxy.refuse();
        else proxy.closePort();
        proxy.cut();
      }
      await sleep(REFUSAL_MS);
      for (const proxy of proxies) {
        if (how === 'reset') proxy.accept();
        else await proxy.reopenPort();
      }
      await sleep(LAST_RESET_AFTER_MS);
      for (const proxy of proxies) proxy.cut();
      const recovered = Date.now();
      ctx.ticker.poke();
      const resumed = await resumedAfter(ctx, recovered);
      return new Map(ctx.clients.map((c) => [c.name, { resumedS: resumed.get(c.name) }]));
    },
  };
}

const outage: Scenario = {
  id: 'outage-60s',
  proxied: true,
  run: async (ctx) => {
    const before = new Map<string, number>();
    for (const [name, proxy] of ctx.proxies) {
      proxy.refuse();
      proxy.cut();
      before.set(name, attempts(proxy));
    }
    const began = Date.now();
    await sleep(OUTAGE_MS);
    const minutes = (Date.now() - began) / 60_000;
    const perMinute = new Map<string, number>();
    for (const [name, proxy] of ctx.proxies) {
      perMinute.set(name, (attempts(proxy) - (before.get(name) ?? 0)) / minutes);
      proxy.accept();
    }
    const recovered = Date.now();
    ctx.ticker.poke();
    const resumed = await resumedAfter(ctx, recovered);
    return new Map(
      ctx.clients.map((c) => [
        c.name,
        { resumedS: resumed.get(c.name), attemptsPerMinute: perMinute.get(c.name) ?? 0 },
      ]),
    );
  },
};

const restart: Scenario = {
  id: 'apiserver-restart',
  proxied: false,
  run: async (ctx) => {
    let failed: Error | undefined;
    const restarting = ctx.plane.restartApiserver({ downMs: RESTART_DOWN_MS }).catch((err: unknown) => {
      failed = err instanceof Error ? err : new Error(`the apiserver did not restart: ${String(err)}`);
    });
    // It cannot be ready before the downtime has passed (the old one is gone by then: it is
    // killed within 15 s); from then on, ask often. The harness gives up on it after 90 s.
    await sleep(RESTART_DOWN_MS);
    let ready: number | undefined;
    while (ready === undefined) {
      if (failed !== undefined) throw failed;
      const ok = await ctx.plane
        .adminRequest('GET', '/readyz')
        .then((r) => r.status === 200)
        .catch(() => false);
      if (ok) ready = Date.now();
      else await sleep(100);
    }
    ctx.ticker.poke();
    await restarting;
    const resumed = await resumedAfter(ctx, ready);
    return new Map(ctx.clients.map((c) => [c.name, { resumedS: resumed.get(c.name) }]));
  },
};

const stall: Scenario = {
  id: 'half-open-stall',
  proxied: true,
  run: async (ctx) => {
    const baseline = new Map<string, { connections: number; abandoned: number }>();
    for (const [name, proxy] of ctx.proxies) {
      proxy.stall({ newConnections: 'flow' });
      baseline.set(name, { connections: proxy.connections, abandoned: proxy.abandoned });
    }
    const began = Date.now();
    ctx.ticker.poke();
    const detected = new Map<string, number>();
    let watching = true;
    const watch = async (): Promise<void> => {
      while (watching) {
        for (const client of ctx.clients) {
          if (detected.has(client.name)) continue;
          const proxy = proxyOf(ctx, client.name);
          const base = baseline.get(client.name);
          if (base === undefined) continue;
          if (proxy.connections > base.connections || proxy.abandoned > base.abandoned)
            detected.set(client.name, (Date.now() - began) / 1000);
        }
        await sleep(POLL_MS);
      }
    };
    const watched = watch();
    const resumed = await resumedAfter(ctx, began);
    watching = false;
    await watched;
    return new Map(
      ctx.clients.map((c) => [c.name, { resumedS: resumed.get(c.name), detectedS: detected.get(c.name) }]),
    );
  },
};

export const scenarios: readonly Scenario[] = [
  refusalThenReset('refused-reset', 'reset'),
  refusalThenReset('refused-closed-port', 'closed-port'),
  outage,
  restart,
  stall,
];
