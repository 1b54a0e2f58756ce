/**
 * What the translator manages, what is pending (waiting for a dependency or for OpenStack), and
 * what is failing with which OpenStack error: for /readyz, logs and metrics. It also knows which
 * objects are being reconciled, and which started a reconcile since a given moment, so the drift
 * check leaves alone what a reconcile is changing at the same time.
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
  /** Reconciles started so far; each object's last start, and its reconciles in flight. */
  #starts = 0;
  readonly #lastStart = new Map<string, number>();
  readonly #inFlight = new Map<string, number>();

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

  /** The object's state, if it is known. */
  get(kind: string, key: string): ObjectState | undefined {
    return this.#objects.get(`${kind}/${key}`);
  }

  /** A reconcile of the object starts; {@link finished} must follow. */
  started(kind: string, key: string): void {
    const id = `${kind}/${key}`;
    this.#lastStart.set(id, ++this.#starts);
    this.#inFlight.set(id, (this.#inFlight.get(id) ?? 0) + 1);
  }

  finished(kind: string, key: string): void {
    const id = `${kind}/${key}`;
    const left = (this.#inFlight.get(id) ?? 1) - 1;
    if (left > 0) this.#inFlight.set(id, left);
    else {
      this.#inFlight.delete(id);
      if (!this.#objects.has(id)) this.#lastStart.delete(id);
    }
  }

  /** A mark to pass to {@link busySince}: the reconciles started so far. */
  mark(): number {
    return this.#starts;
  }

  /** Whether a reconcile of the object is running, or started after `mark` was taken. */
  busySince(kind: string, key: string, mark: number): boolean {
    const id = `${kind}/${key}`;
    return this.#inFlight.has(id) || (this.#lastStart.get(id) ?? 0) > mark;
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
