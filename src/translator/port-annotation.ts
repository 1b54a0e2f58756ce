/**
 * The annotation in which the translator records a pod's Neutron port on the pod, and how to read
 * it back: the pod's addresses for members and for NetworkPolicy peers.
 *
 * `{"id", "mac", "ips", "subnetId", "subnetIds"}`: `ips` holds an address per family (the primary
 * family first), `subnetIds[i]` the subnet of `ips[i]`, and `subnetId` the first of them.
 */
import type { DeepReadonly } from '../cache/deep-freeze.js';
import type { KubeObject } from '../client/kube-object.js';
import type { Port } from '../openstack/neutron-types.js';
import { familyOf } from './cidr.js';

export const PORT_ANNOTATION = 'raven.openstack.org/port';

export interface PodAddress {
  ip: string;
  subnetId: string;
}

/** The annotation's text for `port`, its addresses in the order of `subnets` (primary family first). */
export function portAnnotation(
  port: Pick<Port, 'id' | 'mac_address' | 'fixed_ips'>,
  subnets: readonly { id: string }[],
): string {
  const rank = (subnetId: string): number => {
    const i = subnets.findIndex((s) => s.id === subnetId);
    return i < 0 ? subnets.length : i;
  };
  const fixed = [...port.fixed_ips].sort((a, b) => rank(a.subnet_id) - rank(b.subnet_id));
  return JSON.stringify({
    id: port.id,
    mac: port.mac_address,
    ips: fixed.map((f) => f.ip_address),
    subnetId: fixed[0]?.subnet_id,
    subnetIds: fixed.map((f) => f.subnet_id),
  });
}

/** Every port address of a pod, from its annotation (what the translator recorded), primary first. */
export function podPortAddresses(pod: DeepReadonly<KubeObject> | undefined): PodAddress[] {
  const raw = pod?.metadata?.annotations?.[PORT_ANNOTATION];
  if (raw === undefined) return [];
  try {
    const parsed = JSON.parse(raw) as { ips?: string[]; subnetId?: string; subnetIds?: string[] };
    return (parsed.ips ?? []).flatMap((ip, i) => {
      const subnetId = parsed.subnetIds?.[i] ?? (i === 0 ? parsed.subnetId : undefined);
      return subnetId === undefined ? [] : [{ ip, subnetId }];
    });
  } catch {
    return [];
  }
}

/** The pod's port address of `family` (default: its first, the primary family's). */
export function podPortAddress(
  pod: DeepReadonly<KubeObject> | undefined,
  family?: 4 | 6,
): PodAddress | undefined {
  const all = podPortAddresses(pod);
  return family === undefined ? all[0] : all.find((a) => familyOf(a.ip) === family);
}
