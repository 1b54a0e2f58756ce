/**
 * What the translator knows of one namespace's network: the Neutron network, its subnet per
 * family and its security group. Shared by the namespace translator (which makes it), the port
 * pools and the context that caches it.
 */
import type { FamilySubnet } from './infrastructure.js';

export interface NamespaceNetwork {
  networkId: string;
  /**
   * A subnet per family of the pod CIDRs, the primary family first. Their CIDRs are what a
   * NetworkPolicy peer naming every pod of the namespace becomes.
   */
  subnets: FamilySubnet[];
  securityGroupId: string;
}
