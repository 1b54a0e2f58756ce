/**
 * What a watcher's pipeline (`pipeline/watcher-pipeline.ts`) tells the delivery layer beside each
 * change: how a scope's relist went, and where a watch resumes. Here, below both, so that delivery
 * reads them without knowing the pipeline.
 */
import type { KubeObject } from '../../client/kube-object.js';

/** How a scope's relist went. */
export interface Relist {
  /** The relist's resourceVersion: every change up to it is in the objects now. */
  resourceVersion: string;
  /** The resourceVersion the scope was at when it lost its place. */
  from: string | undefined;
  /** When the scope last heard from the server before that (milliseconds since the epoch). */
  lastEventAt: number | undefined;
  /** The resumed watch expired before delivering anything; its results were not passed on. */
  atResumePoint: boolean;
  /**
   * How many changes the relist found (objects added, modified or gone since the scope lost its
   * place). None: every object is as it was, and the only changes a relist cannot see are those
   * of an object made and deleted entirely in between.
   */
  changes: number;
}

/** Where to resume: the resourceVersion to watch from and the objects known at it (redacted). */
export interface ResumeFrom {
  resourceVersion: string;
  objects: readonly KubeObject[];
}
