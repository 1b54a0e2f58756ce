/**
 * What the translator needs to know about the cluster and the cloud. Names and CIDRs are
 * configurable; pre-existing resources may be given by ID (then they are used, never deleted).
 */
export interface TranslatorSettings {
  /** Tags and names carry it: several clusters can share one project. [a-z0-9-], at most 30 characters. */
  clusterId: string;
  /** The cluster's service CIDR (kube-apiserver --service-cluster-ip-range). */
  serviceCidr: string;
  /** The cluster CIDR, from which a subnet per namespace is allocated. */
  podCidr: string;
  /** Size of each namespace's subnet. Default 24. */
  podPrefixLength: number;
  /** An external network for floating IPs (externalIPs, type LoadBalancer); none: no floating IPs. */
  externalNetworkId?: string | undefined;
  /** Pre-existing resources to use instead of creating them. */
  existing: {
    serviceNetworkId?: string | undefined;
    serviceSubnetId?: string | undefined;
    routerId?: string | undefined;
    subnetPoolId?: string | undefined;
  };
  /** Octavia provider. Default: the cloud's default. */
  loadBalancerProvider?: string | undefined;
  /** How long to wait for a load balancer to become ACTIVE. Default 300 s. */
  loadBalancerTimeoutMs: number;
  /** Garbage collection period. Default 300 s. */
  gcIntervalMs: number;
  /** Concurrent reconciles per kind. Default 4. */
  workers: number;
}

export const defaultSettings = {
  podPrefixLength: 24,
  loadBalancerTimeoutMs: 300_000,
  gcIntervalMs: 300_000,
  workers: 4,
  existing: {},
} satisfies Partial<TranslatorSettings>;

/** The last usable address of an IPv4 CIDR: the service subnet's gateway, so the first address (the `kubernetes` Service's ClusterIP) stays free for its VIP. */
export function lastUsableAddress(cidr: string): string {
  const [base = '', bits = '32'] = cidr.split('/');
  const prefix = Number(bits);
  const octets = base.split('.').map(Number);
  const value =
    ((octets[0] ?? 0) << 24) | ((octets[1] ?? 0) << 16) | ((octets[2] ?? 0) << 8) | (octets[3] ?? 0);
  const size = 2 ** (32 - prefix);
  const network = (value >>> 0) - ((value >>> 0) % size);
  const last = network + size - 2;
  return [24, 16, 8, 0].map((shift) => (last >>> shift) & 255).join('.');
}
