/**
 * A Kubernetes Event read as an occurrence: one shape for `events.k8s.io/v1` and core `v1`
 * Events, so routes and sinks need not know which API the cluster served. An Event object is
 * created once and then updated each time the same thing happens again (its `count`, or its
 * `series.count`, grows): every such update is an occurrence, never an "unchanged" object.
 */
import type { KubeObject } from '../../client/kube-object.js';

/** The object an Event is about, with what the shared cache knew of it. */
export interface InvolvedObject {
  apiVersion: string | undefined;
  kind: string;
  namespace: string | undefined;
  name: string;
  uid: string | undefined;
  /** From the cache of involved objects; empty when it does not hold the object (`found: false`). */
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** The top of its controller chain (a Pod's Deployment, through its ReplicaSet), when cached. */
  owner: { kind: string; name: string; uid: string | undefined } | undefined;
  /** Whether the cache held the object when the occurrence was read. */
  found: boolean;
}

export interface EventOccurrence {
  /** `Normal` or `Warning`. */
  type: string;
  reason: string;
  message: string;
  /** How many times it happened so far (1 for a single Event). */
  count: number;
  /** `count` as last delivered for this Event (0 for a new one). */
  previousCount: number;
  /** When it first and last happened (ISO 8601), as the Event says. */
  firstTime: string | undefined;
  lastTime: string | undefined;
  /** The component that reported it: `reportingController` or `source.component`. */
  component: string;
  /** The node, for Events reported by a kubelet. */
  host: string | undefined;
  involvedObject: InvolvedObject;
  /**
   * Repeats of the same occurrence (object, reason, type, message) that were not delivered
   * because they came within the watcher's `dedupWindowSeconds` of a delivered one. Counted on the
   * next one delivered; 0 otherwise.
   */
  suppressed: number;
  /** This one is such a repeat: it travels silently (recorded, not delivered). */
  duplicate: boolean;
}

type Fields = Record<string, unknown>;

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
const rec = (value: unknown): Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : {};

/** The first defined of several timestamps (a v1 Event may carry either `lastTimestamp` or `eventTime`). */
const firstOf = (...values: unknown[]): string | undefined => values.map(str).find((v) => v !== undefined);

/** Whether an object is an Event of either API. */
export function isKubeEvent(object: KubeObject): boolean {
  const apiVersion = object.apiVersion;
  return object.kind === 'Event' && (apiVersion === 'v1' || apiVersion === 'events.k8s.io/v1');
}

/**
 * Read an Event of either API. `previous` is the state last delivered (for `previousCount`); the
 * involved object comes without cache data (`found: false`) until {@link InvolvedObjects} fills it.
 */
export function readOccurrence(object: KubeObject, previous?: KubeObject): EventOccurrence {
  const e = object as unknown as Fields;
  const modern = object.apiVersion === 'events.k8s.io/v1';
  const series = rec(e.series);
  const count = (o: Fields): number =>
    modern
      ? (num(rec(o.series).count) ?? num(o.deprecatedCount) ?? 1)
      : (num(rec(o.series).count) ?? num(o.count) ?? 1);
  const ref = rec(modern ? e.regarding : e.involvedObject);
  const source = rec(modern ? e.deprecatedSource : e.source);
  return {
    type: str(e.type) ?? 'Normal',
    reason: str(e.reason) ?? '',
    message: str(modern ? e.note : e.message) ?? '',
    count: count(e),
    previousCount: previous === undefined ? 0 : count(previous as unknown as Fields),
    firstTime: modern
      ? firstOf(e.deprecatedFirstTimestamp, e.eventTime, object.metadata?.creationTimestamp)
      : firstOf(e.firstTimestamp, e.eventTime, object.metadata?.creationTimestamp),
    lastTime: modern
      ? firstOf(
          series.lastObservedTime,
          e.deprecatedLastTimestamp,
          e.eventTime,
          object.metadata?.creationTimestamp,
        )
      : firstOf(series.lastObservedTime, e.lastTimestamp, e.eventTime, object.metadata?.creationTimestamp),
    component: str(e.reportingController) ?? str(source.component) ?? str(e.reportingComponent) ?? '',
    host: str(source.host) ?? (modern ? undefined : str(e.reportingInstance)),
    involvedObject: {
      apiVersion: str(ref.apiVersion),
      kind: str(ref.kind) ?? '',
      namespace: str(ref.namespace),
      name: str(ref.name) ?? '',
      uid: str(ref.uid),
      labels: {},
      annotations: {},
      owner: undefined,
      found: false,
    },
    suppressed: 0,
    duplicate: false,
  };
}

/**
 * Whether a `modified` Event is a new occurrence: its count grew or it happened again later. An
 * update that changes neither (a label added by hand) is not one.
 */
export function isNewOccurrence(occurrence: EventOccurrence, previous: EventOccurrence | undefined): boolean {
  if (previous === undefined) return true;
  return occurrence.count > previous.count || timeOf(occurrence.lastTime) > timeOf(previous.lastTime);
}

/** Milliseconds since the epoch of an Event timestamp (precisions differ: compare parsed); 0 if unknown. */
export function timeOf(timestamp: string | undefined): number {
  const ms = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
  return Number.isNaN(ms) ? 0 : ms;
}
