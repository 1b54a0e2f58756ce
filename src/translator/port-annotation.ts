/**
 * The annotation in which the translator records a pod's Neutron port on the pod (id, MAC, IPs,
 * subnet), and how to read it back: the pod's address for members and for NetworkPolicy peers.
 */
import type { DeepReadonly } from '../cache/deep-freeze.js';
import type { KubeObject } from '../client/kube-object.js';

export const PORT_ANNOTATION = 'raven.openstack.org/port';

/** The port IP of a pod, from its annotation (what the translator recorded). */
export function podPortAddress(
  pod: DeepReadonly<KubeObject> | undefined,
): { ip: string; subnetId: string } | undefined {
  const raw = pod?.metadata?.annotations?.[PORT_ANNOTATION];
  if (raw === undefined) return undefined;
  try {
    const parsed = JSON.parse(raw) as { ips?: string[]; subnetId?: string };
    const ip = parsed.ips?.[0];
    return ip === undefined || parsed.subnetId === undefined ? undefined : { ip, subnetId: parsed.subnetId };
  } catch {
    return undefined;
  }
}
