/**
 * What the translator manages, what is pending (waiting for a dependency or for OpenStack), and
 * what is failing with which OpenStack error: for /readyz, logs and metrics.
 */
export interface ObjectState {
  kind: string;
  key: string;
  state: 'managed' | 'pending' | 'failing';
  reason?: string | undefined;
  since: number;
}

export class TranslationStatus {
  readonly #objects = new Map<string, ObjectState>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  #set(kind: string, key: string, state: ObjectState['state'], reason?: string): void {
    const id = `${kind}/${key}`;
    const current = this.#objects.get(id);
    if (current?.state === state && current.reason === reason) return;
    this.#objects.set(id, { kind, key, state, reason, since: this.#now() });
  }

  managed(kind: string, key: string): void {
    this.#set(kind, key, 'managed');
  }

  pending(kind: string, key: string, reason: string): void {
    this.#set(kind, key, 'pending', reason);
  }

  failing(kind: string, key: string, reason: string): void {
    this.#set(kind, key, 'failing', reason);
  }

  /** The object is gone and everything made for it removed. */
  forget(kind: string, key: string): void {
    this.#objects.delete(`${kind}/${key}`);
  }

  list(): ObjectState[] {
    return [...this.#objects.values()];
  }

  counts(): Record<ObjectState['state'], number> {
    const counts = { managed: 0, pending: 0, failing: 0 };
    for (const o of this.#objects.values()) counts[o.state]++;
    return counts;
  }
}
