/**
 * The shape every Kubernetes object shares. Typed objects (`Pod` from kubernetes-types, a CRD's own
 * interface) satisfy it, so generic code can be instantiated with them.
 */
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}
