/**
 * The chaos run's driver: makes the schedule's operations on the apiserver, one after the other at
 * their times, straight to the apiserver (not through the proxy Raven's replicas use), and keeps
 * every answer (uid, resourceVersion, type) for the checker to compare with its own history.
 *
 * The apiserver restarts during a run, so a request that fails or gets a 5xx is made again after
 * half a second. A retried creation answered 409, or a retried deletion answered 404, had been
 * made by the attempt whose answer was lost; it is not recorded (the history still has it).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { ControlPlane } from '../harness/control-plane.js';
import type { Write } from './checker.js';
import { SELECTOR_LABEL, type Labels, type Op, type Timed } from './schedule.js';

/** A safety net for one operation that keeps failing (an apiserver that does not come back). */
const GIVE_UP_MS = 300_000;

export class Driver {
  readonly writes: Write[] = [];
  /** Operations made, and how late the last one started (ms). */
  done = 0;
  lateMs = 0;

  constructor(
    private readonly plane: ControlPlane,
    private readonly log: (line: string) => void,
  ) {}

  /** Make every operation at `start + atMs` (or as soon after as the one before allows). */
  async run(ops: readonly Timed<Op>[], start: number): Promise<void> {
    for (const [step, { atMs, item }] of ops.entries()) {
      const wait = start + atMs - Date.now();
      if (wait > 0) await delay(wait);
      else this.lateMs = -wait;
      await this.apply(item, step);
      this.done++;
    }
  }

  async apply(op: Op, step: number): Promise<void> {
    const path = (ns: string, name?: string): string =>
      `/api/v1/namespaces/${ns}/configmaps${name === undefined ? '' : `/${name}`}`;
    const data = (bytes: number): Record<string, string> => {
      const mark = `${step}:`;
      return { v: mark + 'x'.repeat(Math.max(0, bytes - mark.length)) };
    };
    switch (op.kind) {
      case 'create':
        return this.#create(op.ns, op.name, op.labels, data(op.bytes));
      case 'update-data':
        return this.#write('modified', 'PATCH', path(op.ns, op.name), { data: data(op.bytes) });
      case 'update-labels':
        return this.#write('modified', 'PATCH', path(op.ns, op.name), {
          metadata: { labels: { [SELECTOR_LABEL]: op.labels[SELECTOR_LABEL] ?? null } },
        });
      case 'delete':
        return this.#write('deleted', 'DELETE', path(op.ns, op.name));
      case 'recreate':
        await this.#write('deleted', 'DELETE', path(op.ns, op.name));
        return this.#create(op.ns, op.name, op.labels, data(op.bytes));
      case 'recreate-namespace':
        return this.#recreateNamespace(op.ns);
    }
  }

  #create(ns: string, name: string, labels: Labels, data: Record<string, string>): Promise<void> {
    return this.#write('added', 'POST', `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name, labels },
      data,
    });
  }

  async #write(type: Write['type'], method: string, path: string, body?: unknown): Promise<void> {
    const answer = await this.#request(method, path, body);
    if (answer === undefined) return;
    const parsed = JSON.parse(answer) as {
      metadata?: { uid?: string; resourceVersion?: string };
      details?: { uid?: string };
    };
    const uid = parsed.metadata?.uid ?? parsed.details?.uid;
    if (uid === undefined) throw new Error(`${method} ${path}: no uid in the answer ${answer.slice(0, 300)}`);
    this.writes.push(
      type === 'deleted'
        ? { type, uid }
        : { type, uid, resourceVersion: parsed.metadata?.resourceVersion ?? '' },
    );
  }

  async #recreateNamespace(ns: string): Promise<void> {
    await this.#request('DELETE', `/api/v1/namespaces/${ns}`);
    const giveUp = Date.now() + GIVE_UP_MS;
    for (;;) {
      const { status } = await this.plane
        .adminRequest('GET', `/api/v1/namespaces/${ns}`)
        .catch(() => ({ status: 0 }));
      if (status === 404) break;
      if (Date.now() > giveUp) throw new Error(`namespace ${ns} was never gone after its deletion`);
      await delay(250);
    }
    await this.#request('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    this.log(`namespace ${ns} deleted and created again`);
  }

  /** The answer's body, or undefined when a retry found the change already made. */
  async #request(method: string, path: string, body?: unknown): Promise<string | undefined> {
    const giveUp = Date.now() + GIVE_UP_MS;
    let retried = false;
    for (;;) {
      const answer = await this.plane
        .adminRequest(method, path, body, undefined, 30_000)
        .catch((err: unknown) => ({
          status: 0,
          body: String(err),
        }));
      if (answer.status >= 200 && answer.status < 300) return answer.body;
      if (
        retried &&
        ((method === 'POST' && answer.status === 409) || (method === 'DELETE' && answer.status === 404))
      )
        return undefined;
      const transient = answer.status === 0 || answer.status === 429 || answer.status >= 500;
      if (!transient || Date.now() > giveUp)
        throw new Error(`${method} ${path}: ${answer.status} ${answer.body.slice(0, 500)}`);
      retried = true;
      await delay(500);
    }
  }
}
