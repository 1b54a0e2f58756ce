/**
 * What the translator needs to know about the cluster and the cloud. Names and CIDRs are
 * configurable; pre-existing resources may be given by ID (then they are used, never deleted).
 */
/** A namespace's pool of pre-created ports. */
export interface PortPoolSettings {
  /** Free ports the pool is filled up to. */
  size: number;
  /** Refill (up to `size`, in one bulk create) when fewer free ports than this are left. */
  refillBelow: number;
}

export interface TranslatorSettings {
  /** Tags and names carry it: several clusters can share one project. [a-z0-9-], at most 30 characters. */
  clusterId: string;
  /**
   * The cluster's service CIDRs (kube-apiserver --service-cluster-ip-range): one, or one per family
   * (dual stack), the primary family first.
   */
  serviceCidrs: string[];
  /** The cluster CIDRs, one per family, from which a subnet per namespace is allocated (per family). */
  podCidrs: string[];
  /** Size of each namespace's IPv4 subnet. Default 24. */
  podPrefixLength: number;
  /** Size of each namespace's IPv6 subnet. Default 64. */
  podPrefixLengthIPv6: number;
  /** Pre-created ports per namespace, so that a new pod's port is an update, not a create; none: no pools. */
  portPool?: PortPoolSettings | undefined;
  /** An external network for floating IPs (externalIPs, type LoadBalancer); none: no floating IPs. */
  externalNetworkId?: string | undefined;
  /** Pre-existing resources to use instead of creating them. */
  existing: {
    serviceNetworkId?: string | undefined;
    /** The IPv4 service subnet; `serviceSubnetIdIPv6`, the IPv6 one. */
    serviceSubnetId?: string | undefined;
    serviceSubnetIdIPv6?: string | undefined;
    routerId?: string | undefined;
    /** The IPv4 pod subnet pool; `subnetPoolIdIPv6`, the IPv6 one. */
    subnetPoolId?: string | undefined;
    subnetPoolIdIPv6?: string | undefined;
  };
  /** Octavia provider. Default: the cloud's default. */
  loadBalancerProvider?: string | undefined;
  /** How long to wait for a load balancer to become ACTIVE. Default 300 s. */
  loadBalancerTimeoutMs: number;
  /** Garbage collection period. Default 300 s. */
  gcIntervalMs: number;
  /** Drift check period (desired against actual for every kind, `resync.ts`); 0: off. Default 60 s. */
  resyncIntervalMs: number;
  /** Concurrent reconciles per kind. Default 4. */
  workers: number;
}

export const defaultSettings = {
  podPrefixLength: 24,
  podPrefixLengthIPv6: 64,
  loadBalancerTimeoutMs: 300_000,
  gcIntervalMs: 300_000,
  resyncIntervalMs: 60_000,
  workers: 4,
  existing: {},
} satisfies Partial<TranslatorSettings>;
